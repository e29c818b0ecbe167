"""``python -m bench`` (``make bench``); ``BENCH_QUICK=1`` for a ~2-minute smoke run."""

from bench.run import main

raise SystemExit(main())
