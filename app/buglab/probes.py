"""The probes a quiz's learners spent, counted where every worker sees them (issue 35, finding 4).

A learner may spend settings.quiz_probes probes on a quiz; and every learner from one client
address together may probe at most settings.quiz_probes_per_address distinct steps of it. The
second bound is what an address cannot multiply: identities are issued 60 an hour to an address
(app.sessions.voters), so per learner alone one address bought 42 probes with 14 identities and read
the broken step off the first failing check. Steps an address already probed are free for its other
learners (they sit in one room: the verdict is theirs already). The trade-off: learners behind one
address (a NAT) probing the same quiz share one learner's worth of new steps; a /quiz of their own
draws a fresh quiz number each, so only a class's quiz is shared, and a class behind one address
raises XT_QUIZ_PROBES_PER_ADDRESS.

Where the sessions live (settings.redis_url), the counts live too: in Redis, checked and written in
one Lua script, so two workers cannot both spend a learner's last probe; else in this process
(bounded, least recently used first out).

    counts = make_probe_counts(settings.redis_url)
    status, probed = await counts.spend(trace_id, learner, address, step, most, most_per_address)
"""

from __future__ import annotations

import asyncio
import functools
from enum import IntEnum

from fastapi import HTTPException

from app.traces.cache import LRU
from app.words.said import Said

PROBES_TTL_S = 30 * 86400  # as long as an identity lives (app.sessions.voters.VOTER_MAX_AGE_S)
REMEMBERED = 100_000  # in-process: (quiz, learner) and (quiz, address) entries


class Spent(IntEnum):
    """What a probe's spending found."""

    SPENT = 0  # the probe is spent now, or the step was probed already: free
    LEARNER = 1  # the learner's probes are all spent
    ADDRESS = 2  # the probes of the learners from this address are all spent
    ANSWERED = 3  # the learner answered already: every probe is free


class MemoryProbeCounts:
    """The counts in this process (one worker, or workers without Redis: each counts its own)."""

    def __init__(self):
        self._learners: LRU[list[int]] = LRU(REMEMBERED)
        self._addresses: LRU[set[int]] = LRU(REMEMBERED)
        self._answered: LRU[bool] = LRU(REMEMBERED)

    async def spend(
        self, trace_id: str, learner: str, address: str, step: int, most: int, most_per_address: int
    ) -> tuple[Spent, list[int]]:
        probed = self._learners.get((trace_id, learner)) or []
        seen = self._addresses.get((trace_id, address)) or set()
        if self._answered.get((trace_id, learner)):
            return Spent.ANSWERED, probed
        if step in probed:
            return Spent.SPENT, probed
        if len(probed) >= most:
            return Spent.LEARNER, probed
        if step not in seen and len(seen) >= most_per_address:
            return Spent.ADDRESS, probed
        self._learners.put((trace_id, learner), [*probed, step])
        self._addresses.put((trace_id, address), seen | {step})
        return Spent.SPENT, [*probed, step]

    async def answered(self, trace_id: str, learner: str) -> None:
        self._answered.put((trace_id, learner), True)

    async def load(self, trace_id: str, learner: str) -> tuple[list[int], bool]:
        return self._learners.get((trace_id, learner)) or [], bool(self._answered.get((trace_id, learner)))


# KEYS: the learner's probed steps (a sorted set, scored by order), the address's (a set), the
# learner's answered flag. ARGV: step, most, most per address, ttl. Returns {status, steps...}.
SPEND = """
local status = 0
if redis.call('EXISTS', KEYS[3]) == 1 then status = 3
elseif redis.call('ZSCORE', KEYS[1], ARGV[1]) then status = 0
elseif redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[2]) then status = 1
elseif redis.call('SISMEMBER', KEYS[2], ARGV[1]) == 0 and redis.call('SCARD', KEYS[2]) >= tonumber(ARGV[3]) then
  status = 2
else
  redis.call('ZADD', KEYS[1], redis.call('ZCARD', KEYS[1]), ARGV[1])
  redis.call('SADD', KEYS[2], ARGV[1])
  redis.call('EXPIRE', KEYS[1], ARGV[4])
  redis.call('EXPIRE', KEYS[2], ARGV[4])
end
local out = redis.call('ZRANGE', KEYS[1], 0, -1)
table.insert(out, 1, status)
return out
"""


def _keys(trace_id: str, learner: str, address: str) -> list[str]:
    base = f"xt:quiz:{trace_id}"
    return [f"{base}:probed:{learner}", f"{base}:address:{address}", f"{base}:answered:{learner}"]


def _answered_or_503(method):
    """Redis down: a 503 naming the store (with Retry-After), nothing the learner did wrong."""

    @functools.wraps(method)
    async def wrapper(*args, **kwargs):
        from redis.exceptions import RedisError

        try:
            return await method(*args, **kwargs)
        except (RedisError, OSError) as exc:
            raise HTTPException(
                503, detail=Said("quiz-probes-store-down", reason=str(exc)), headers={"Retry-After": "5"}
            ) from exc

    return wrapper


class RedisProbeCounts:
    """The counts in Redis (settings.redis_url): every worker of the class counts the same probes.
    Keys expire PROBES_TTL_S after their last probe. The client is made on first use, in the loop
    that serves the requests (again if another loop asks: a server has one, a test's clients several)."""

    def __init__(self, url: str):
        self.url = url
        self._loop = self._client = self._spend = None

    def _redis(self):
        loop = asyncio.get_running_loop()
        if self._loop is not loop:
            import redis.asyncio as aioredis  # only when configured

            self._client = aioredis.Redis.from_url(self.url, decode_responses=True, socket_timeout=10)
            self._spend, self._loop = self._client.register_script(SPEND), loop
        return self._client

    @_answered_or_503
    async def spend(
        self, trace_id: str, learner: str, address: str, step: int, most: int, most_per_address: int
    ) -> tuple[Spent, list[int]]:
        self._redis()
        args = [step, most, most_per_address, PROBES_TTL_S]
        status, *probed = await self._spend(keys=_keys(trace_id, learner, address), args=args)
        return Spent(int(status)), [int(i) for i in probed]

    @_answered_or_503
    async def answered(self, trace_id: str, learner: str) -> None:
        await self._redis().set(_keys(trace_id, learner, "")[2], 1, ex=PROBES_TTL_S)

    @_answered_or_503
    async def load(self, trace_id: str, learner: str) -> tuple[list[int], bool]:
        probed_key, _, answered_key = _keys(trace_id, learner, "")
        probed = await self._redis().zrange(probed_key, 0, -1)
        return [int(i) for i in probed], bool(await self._redis().exists(answered_key))


def make_probe_counts(redis_url: str) -> MemoryProbeCounts | RedisProbeCounts:
    return RedisProbeCounts(redis_url) if redis_url else MemoryProbeCounts()
