"""Sessions in Redis (settings.redis_url), through redis-py's asyncio client: every worker
process and host pointing at the same Redis serves the same classes.

Keys (all expire after settings.session_idle_seconds without a touch):
  xt:session:{code}          hash: the session's fields, each a JSON value
  xt:session:{code}:answers  hash: learner identity -> answered step
  xt:session:{code}:addresses  hash: client address -> learners who answered from it
  xt:session:{code}:streams  sorted set: open event streams (follower|connection) -> alive-until (unix seconds)
  xt:sessions                sorted set: code -> expires-at (the cap on open sessions)
  xt:joinfail:{client}:{minute}  failed joins of one client IP in one minute
Events: PUBLISH on xt:events:{code}; each process holds one pattern subscription (xt:events:*)
and hands what arrives to its hub. Creating, changing and answering are Lua scripts, so a
check and its write are one atomic step however many processes race.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import logging
import time

import redis.asyncio as aioredis
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError
from redis.exceptions import TimeoutError as RedisTimeoutError

from app.sessions.hub import Hub, ended_state
from app.sessions.store import FAILURE_WINDOW_S, StoreUnavailable, Vote

log = logging.getLogger("xt.sessions")
CHANNEL_PREFIX = "xt:events:"
REGISTRY = "xt:sessions"
MAX_CONNECTIONS = 64  # per process
HEALTH_CHECK_S = 5
RETRIES = 3  # a command on a dropped connection, tried again on a new one

CREATE = """
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then return 0 end
if redis.call('EXISTS', KEYS[2]) == 1 then return 0 end
redis.call('HSET', KEYS[2], unpack(ARGV, 5))
redis.call('EXPIRE', KEYS[2], ARGV[2])
redis.call('ZADD', KEYS[1], tonumber(ARGV[1]) + tonumber(ARGV[2]), ARGV[4])
return 1
"""
UPDATE = """
if redis.call('EXISTS', KEYS[1]) == 0 then return false end
if #ARGV > 3 then redis.call('HSET', KEYS[1], unpack(ARGV, 4)) end
redis.call('HINCRBY', KEYS[1], 'version', 1)
for i = 1, 3 do redis.call('EXPIRE', KEYS[i], ARGV[1]) end
redis.call('ZADD', KEYS[4], 'XX', ARGV[2], ARGV[3])
return redis.call('HGETALL', KEYS[1])
"""
ANSWER = """
if redis.call('EXISTS', KEYS[1]) == 0 then return 'gone' end
if redis.call('HEXISTS', KEYS[2], ARGV[1]) == 0 then
  if redis.call('HLEN', KEYS[2]) >= tonumber(ARGV[3]) then return 'full' end
  if tonumber(redis.call('HGET', KEYS[3], ARGV[5]) or '0') >= tonumber(ARGV[6]) then return 'address' end
  redis.call('HINCRBY', KEYS[3], ARGV[5], 1)
end
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
redis.call('EXPIRE', KEYS[2], ARGV[4])
redis.call('EXPIRE', KEYS[3], ARGV[4])
return 'ok'
"""
FOLLOWERS = """
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
local seen, count = {}, 0
for _, stream in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
  local follower = string.match(stream, '^(.*)|') or stream
  if not seen[follower] then
    seen[follower] = true
    count = count + 1
  end
end
return count
"""


def _unavailable(method):
    @functools.wraps(method)
    async def wrapper(*args, **kwargs):
        try:
            return await method(*args, **kwargs)
        except RedisError as exc:
            raise StoreUnavailable(f"the session store (Redis) did not answer: {exc}") from exc

    return wrapper


def _key(code: str, part: str = "") -> str:
    return f"xt:session:{code}{':' + part if part else ''}"


def _decode(raw) -> dict:
    """HGETALL's answer (a dict, or a flat list from a script) -> fields with JSON values."""
    pairs = raw.items() if isinstance(raw, dict) else zip(raw[::2], raw[1::2], strict=True)
    return {name: json.loads(value) for name, value in pairs}


def _flat(fields: dict) -> list[str]:
    return [item for name, value in fields.items() for item in (name, json.dumps(value, separators=(",", ":")))]


class RedisStore:
    def __init__(self, url: str):
        self.hub = Hub()
        # A blocking pool: a burst (a class of 200 opening their streams at once) waits for one
        # of MAX_CONNECTIONS connections instead of failing past the default pool's 100. A pooled
        # connection idle for HEALTH_CHECK_S is pinged before use, and a command that meets a
        # dropped connection (Redis restarted) is retried on a new one: not a 503.
        pool = aioredis.BlockingConnectionPool.from_url(
            url,
            max_connections=MAX_CONNECTIONS,
            timeout=10,
            decode_responses=True,
            health_check_interval=HEALTH_CHECK_S,
            retry=Retry(ExponentialBackoff(cap=1.0, base=0.05), RETRIES),
            retry_on_error=[RedisConnectionError, RedisTimeoutError],
        )
        self.client = aioredis.Redis(connection_pool=pool)
        self._create = self.client.register_script(CREATE)
        self._update = self.client.register_script(UPDATE)
        self._answer = self.client.register_script(ANSWER)
        self._followers = self.client.register_script(FOLLOWERS)
        self._reader: asyncio.Task | None = None
        self._subscribed: asyncio.Event | None = None

    async def start(self) -> None:
        """The pattern subscription, once per process, before the first stream listens."""
        if self._reader is None:
            self._subscribed = asyncio.Event()
            self._reader = asyncio.get_running_loop().create_task(self._read())
        try:
            await asyncio.wait_for(self._subscribed.wait(), timeout=5)
        except TimeoutError:
            raise StoreUnavailable("the session store (Redis) did not accept the event subscription") from None

    async def _read(self) -> None:
        while True:
            pubsub = self.client.pubsub(ignore_subscribe_messages=True)
            try:
                await pubsub.psubscribe(CHANNEL_PREFIX + "*")
                self._subscribed.set()
                async for message in pubsub.listen():
                    if message.get("type") == "pmessage":
                        code = message["channel"][len(CHANNEL_PREFIX) :]
                        self.hub.deliver(code, json.loads(message["data"]))
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # Redis went away: retry; streams keep their last state meanwhile
                log.warning("session events subscription lost (%s); retrying in 1 s", exc)
                self._subscribed.clear()
                await asyncio.sleep(1)
            finally:
                await pubsub.aclose()

    @_unavailable
    async def create(self, fields: dict, max_sessions: int, ttl: int) -> bool:
        code = fields["code"]
        args = [time.time(), ttl, max_sessions, code, *_flat({**fields, "version": 0})]
        return bool(await self._create(keys=[REGISTRY, _key(code)], args=args))

    @_unavailable
    async def load(self, code: str) -> dict | None:
        raw = await self.client.hgetall(_key(code))
        return _decode(raw) if raw else None

    @_unavailable
    async def update(self, code: str, changes: dict, ttl: int) -> dict | None:
        keys = [_key(code), _key(code, "answers"), _key(code, "streams"), REGISTRY]
        raw = await self._update(keys=keys, args=[ttl, time.time() + ttl, code, *_flat(changes)])
        return _decode(raw) if raw else None

    @_unavailable
    async def touch(self, code: str, ttl: int) -> bool:
        async with self.client.pipeline(transaction=False) as pipe:
            for key in (_key(code), _key(code, "answers"), _key(code, "addresses"), _key(code, "streams")):
                pipe.expire(key, ttl)
            pipe.zadd(REGISTRY, {code: time.time() + ttl}, xx=True)
            alive, *_ = await pipe.execute()
        return bool(alive)

    @_unavailable
    async def answers(self, code: str) -> dict[str, int]:
        return {voter: int(step) for voter, step in (await self.client.hgetall(_key(code, "answers"))).items()}

    @_unavailable
    async def answer(self, code: str, vote: Vote, ttl: int) -> str:
        keys = [_key(code), _key(code, "answers"), _key(code, "addresses")]
        args = [vote.voter, vote.step, vote.max_answers, ttl, vote.address, vote.per_address]
        return await self._answer(keys=keys, args=args)

    @_unavailable
    async def clear_answers(self, code: str) -> None:
        await self.client.delete(_key(code, "answers"), _key(code, "addresses"))

    @_unavailable
    async def end(self, code: str) -> bool:
        keys = [_key(code, part) for part in ("", "answers", "addresses", "streams")]
        async with self.client.pipeline(transaction=True) as pipe:
            pipe.delete(*keys)
            pipe.zrem(REGISTRY, code)
            deleted, _ = await pipe.execute()
        if deleted:
            await self.publish(code, ended_state(code))
        return bool(deleted)

    @_unavailable
    async def join(self, code: str, stream: str, ttl: int) -> None:
        await self.client.zadd(_key(code, "streams"), {stream: time.time() + ttl})

    @_unavailable
    async def leave(self, code: str, stream: str) -> None:
        await self.client.zrem(_key(code, "streams"), stream)

    @_unavailable
    async def followers(self, code: str) -> int:
        return int(await self._followers(keys=[_key(code, "streams")], args=[time.time()]))

    @_unavailable
    async def following(self, code: str, follower: str) -> bool:
        now = time.time()
        async for _, until in self.client.zscan_iter(_key(code, "streams"), match=f"{follower}|*"):
            if until > now:
                return True
        return False

    @_unavailable
    async def answers_by_address(self, code: str) -> dict[str, int]:
        return {a: int(n) for a, n in (await self.client.hgetall(_key(code, "addresses"))).items() if int(n) > 0}

    @_unavailable
    async def publish(self, code: str, state: dict) -> None:
        await self.client.publish(CHANNEL_PREFIX + code, json.dumps(state, separators=(",", ":")))

    def _failure_key(self, client: str) -> str:
        return f"xt:joinfail:{client}:{int(time.time() // FAILURE_WINDOW_S)}"

    @_unavailable
    async def failures(self, client: str) -> int:
        return int(await self.client.get(self._failure_key(client)) or 0)

    @_unavailable
    async def add_failure(self, client: str) -> int:
        key = self._failure_key(client)
        async with self.client.pipeline(transaction=True) as pipe:
            pipe.incr(key)
            pipe.expire(key, 2 * FAILURE_WINDOW_S)
            count, _ = await pipe.execute()
        return int(count)

    async def close(self) -> None:
        self.hub.close()
        if self._reader is not None:
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._reader
        await self.client.aclose()
