"""Real test infrastructure shared by the test suite: no mocks.

- :mod:`tests.support.postgres`: a throw-away PostgreSQL cluster from the installed server binaries.
- :mod:`tests.support.server`: the real ``hookline`` CLI as a subprocess.
- :mod:`tests.support.receiver`: a real HTTP webhook receiver on 127.0.0.1.
"""
