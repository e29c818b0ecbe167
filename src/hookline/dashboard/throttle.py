"""Throttles for the dashboard's doors: log-in, sign-up and "forgot password".

Attempts are rows in the database (``auth_attempts``), so every ``serve`` process and every
restart sees the same counts; no Redis needed. A row holds SHA-256 digests of the client address
and the e-mail, never the values, and rows older than the longest window are swept as new ones
are written.

Each check reads first (a closed door refuses without writing), then writes its attempt and
counts again, so concurrent attempts see each other (the one that would go over a limit is
refused, whichever order they commit in); a refused attempt is removed again, so hammering a
closed door does not keep it closed longer.

Log-in counts failures per (address, e-mail) and per address, never per e-mail alone: five
wrong passwords typed from one address must not lock the owner out from another. An e-mail
attacked from many addresses gets a stricter limit only at addresses that have failed for it,
so the owner's correct password still works from any address that has not failed.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from hookline.storage.connector import Connection
from hookline.storage.db import Database
from hookline.storage.queries import auth_attempts as queries
from hookline.timeutil import utcnow

LOGIN = "login"
SIGNUP = "signup"
RESET = "reset"
INVITATION = "invitation"


@dataclass(frozen=True, slots=True)
class Limit:
    attempts: int
    window: timedelta


@dataclass(frozen=True, slots=True)
class ThrottlePolicy:
    # Failed log-ins from one address for one e-mail.
    login_per_pair: Limit = Limit(5, timedelta(minutes=15))
    # Failed log-ins from one address for any e-mail (an office behind NAT is one address).
    login_per_address: Limit = Limit(20, timedelta(minutes=15))
    # Failed log-ins for one e-mail from all addresses; applies only at addresses that have
    # failed for it, so it slows a distributed guesser down without locking the owner out.
    login_per_email: Limit = Limit(50, timedelta(minutes=15))
    # Sign-up attempts from one address (each may cost a password hash).
    signup_per_address: Limit = Limit(20, timedelta(hours=1))
    # "Forgot password" requests from one address (refused with 429).
    reset_per_address: Limit = Limit(10, timedelta(hours=1))
    # Reset mails to one e-mail (more are silently not sent: the answer must not differ).
    reset_per_email: Limit = Limit(3, timedelta(hours=1))
    # Invitations sent from one account's Team page (each is a mail to any address).
    invitations_per_account: Limit = Limit(20, timedelta(hours=1))

    @property
    def longest_window(self) -> timedelta:
        return max(
            limit.window
            for limit in (
                self.login_per_pair,
                self.login_per_address,
                self.login_per_email,
                self.signup_per_address,
                self.reset_per_address,
                self.reset_per_email,
                self.invitations_per_account,
            )
        )


class Throttled(Exception):
    def __init__(self, retry_after: int) -> None:
        super().__init__(f"retry after {retry_after} s")
        self.retry_after = retry_after


def _digest(kind: str, value: str) -> str:
    return hashlib.sha256(f"{kind}\0{value}".encode()).hexdigest()


@dataclass(frozen=True, slots=True)
class Attempt:
    """One counted attempt (its row id), from an address, perhaps for an e-mail.

    ``id`` 0 is a probe: the keys of an attempt not written yet (row ids start at 1).
    """

    id: int
    scope: str
    address_key: str
    email_key: str | None

    def keys(self) -> dict[str, str | None]:
        """What the attempt's rows are counted by: the parameters its statements take."""
        return {"scope": self.scope, "address_key": self.address_key, "email_key": self.email_key}


@dataclass(frozen=True, slots=True)
class Rule:
    """A limit on the attempts that share this attempt's address and/or e-mail."""

    limit: Limit
    by_address: bool = False
    by_email: bool = False
    # Applies only where this address has failed for this e-mail before (log-in per e-mail).
    only_where_failed: bool = False


class Throttle:
    def __init__(
        self, policy: ThrottlePolicy | None = None, clock: Callable[[], datetime] = utcnow
    ) -> None:
        self.policy = policy or ThrottlePolicy()
        self._clock = clock

    # -- log-in ---------------------------------------------------------------------------------

    async def start_login(self, db: Database, address: str, email: str) -> Attempt:
        """Counts a log-in attempt as a failure until :meth:`login_succeeded` says otherwise.

        Raises :class:`Throttled` when this address may not try this e-mail now.
        """
        policy = self.policy
        rules = [
            Rule(policy.login_per_pair, by_address=True, by_email=True),
            Rule(policy.login_per_address, by_address=True),
            Rule(policy.login_per_email, by_email=True, only_where_failed=True),
        ]
        return await self._admit(db, LOGIN, address, email, rules)

    async def login_succeeded(self, db: Database, attempt: Attempt) -> None:
        """The right password: forget this attempt and this address's failures for the e-mail
        (not its failures for other e-mails, which may be someone guessing)."""
        async with db.begin() as conn:
            await conn.execute(queries.DELETE_PAIR, attempt.keys())

    # -- sign-up, password reset, invitations ---------------------------------------------------

    async def count_signup(self, db: Database, address: str) -> None:
        """Counts a sign-up attempt; raises :class:`Throttled` over the address's limit."""
        rules = [Rule(self.policy.signup_per_address, by_address=True)]
        await self._admit(db, SIGNUP, address, None, rules)

    async def count_reset(self, db: Database, address: str, email: str) -> bool:
        """Counts a reset request. Raises :class:`Throttled` over the address's limit; returns
        False (send nothing, answer the same) over the e-mail's."""
        rules = [Rule(self.policy.reset_per_address, by_address=True)]
        attempt = await self._admit(db, RESET, address, email, rules)
        async with db.read() as conn:
            return (
                await self._wait(conn, attempt, Rule(self.policy.reset_per_email, by_email=True))
                is None
            )

    async def count_invitation(self, db: Database, account_id: str) -> None:
        """Counts an invitation mail; raises :class:`Throttled` over the account's limit."""
        # The account takes the place of the address: its members may be anywhere.
        rules = [Rule(self.policy.invitations_per_account, by_address=True)]
        await self._admit(db, INVITATION, f"account:{account_id}", None, rules)

    # -- the rows -------------------------------------------------------------------------------

    async def _admit(
        self, db: Database, scope: str, address: str, email: str | None, rules: list[Rule]
    ) -> Attempt:
        """Writes the attempt if ``rules`` allow it, or raises :class:`Throttled`.

        A read first, so a closed door answers without writing anything (a flood of refused
        attempts costs reads only); then the write and a second look that counts attempts
        committed meanwhile, so concurrent attempts never all slip through.
        """
        probe = Attempt(
            0,
            scope,
            _digest("address", address),
            None if email is None else _digest("email", email),
        )
        await self._raise_if_over(db, probe, rules)
        attempt = await self._record(db, probe)
        try:
            await self._raise_if_over(db, attempt, rules)
        except Throttled:
            async with db.begin() as conn:
                await conn.execute(queries.DELETE, {"id": attempt.id})
            raise
        return attempt

    async def _raise_if_over(self, db: Database, attempt: Attempt, rules: list[Rule]) -> None:
        waits = []
        async with db.read() as conn:
            for rule in rules:
                if rule.only_where_failed and not await self._has_failed_here(conn, attempt):
                    continue
                waits.append(await self._wait(conn, attempt, rule))
        longest = max((wait for wait in waits if wait is not None), default=None)
        if longest is not None:
            raise Throttled(longest)

    async def _record(self, db: Database, probe: Attempt) -> Attempt:
        now = self._clock()
        async with db.begin() as conn:
            await conn.execute(queries.DELETE_OLDER, {"before": now - self.policy.longest_window})
            row_id = int(await conn.scalar(queries.INSERT, {**probe.keys(), "created_at": now}))
        return Attempt(row_id, probe.scope, probe.address_key, probe.email_key)

    async def _has_failed_here(self, conn: Connection, attempt: Attempt) -> bool:
        since = self._clock() - self.policy.login_per_pair.window
        params = {**attempt.keys(), "id": attempt.id, "since": since}
        return await conn.scalar(queries.PAIR_SINCE, params) is not None

    async def _wait(self, conn: Connection, attempt: Attempt, rule: Rule) -> int | None:
        """Seconds until ``attempt`` would be within ``rule``, or None if it is now.

        The other attempts in the window are counted (this one excluded); when ``limit`` of them
        are there, this one is over, until the ``limit``-th newest leaves the window.
        """
        now = self._clock()
        limit = rule.limit
        params = {
            **attempt.keys(),
            "id": attempt.id,
            "since": now - limit.window,
            "skip": limit.attempts - 1,
        }
        query = queries.NTH_NEWEST.get((rule.by_address, rule.by_email))
        made: datetime | None = await conn.scalar(query, params)
        if made is None:
            return None
        remaining: timedelta = made + limit.window - now
        return max(1, math.ceil(remaining.total_seconds()))
