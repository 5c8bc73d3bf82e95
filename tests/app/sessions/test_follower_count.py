"""Issue 34, finding 1: "N following" in a busy class. A follower's entry is renewed on its own
clock, so a presenter who moves more often than once a heartbeat keeps every follower counted,
and a follower who leaves stops counting at once. The heartbeat is the shortest the settings
take (1 s: an entry expires after 2 beats and 2 s), and the presenter moves every half beat for
longer than an entry lives, so a renewal that waited for a quiet beat would lose both. One
follower then leaves as a move reaches it (Python 3.11's wait_for dropped that cancellation)."""

from __future__ import annotations

import asyncio

from app.sessions.service import Sessions
from app.settings import Settings
from app.spec import TraceSpec, resolve
from tests.app.sessions.conftest import SPEC
from tests.helpers.aio import run_async

BEAT_S = 1
ENTRY_LIFE_S = 2 * BEAT_S + 2


async def _follow(sessions: Sessions, fields: dict, learner: str, seen: list) -> None:
    async for event in sessions.events(fields, learner):
        seen.append(event)


async def _busy_class() -> tuple[list[int], int, int]:
    sessions = Sessions(Settings(follower_heartbeat_seconds=BEAT_S))
    code, _ = await sessions.create(resolve(TraceSpec.model_validate(SPEC), Settings()), [], None, 0)
    fields = await sessions.store.load(code)
    seen: dict[str, list] = {"a": [], "b": []}
    followers = {name: asyncio.create_task(_follow(sessions, fields, name, seen[name])) for name in seen}
    counts = []
    try:
        for move in range(int(2 * (ENTRY_LIFE_S + BEAT_S))):
            await sessions.change(fields, {"step": move % 7})
            await asyncio.sleep(BEAT_S / 2)
            counts.append((await sessions.compose(fields))["followers"])
        events_b = len(seen["b"])
        # b leaves in the same tick as a move reaches its stream: its leaving must not be lost
        await sessions.change(fields, {"step": 3})
        followers["b"].cancel()
        await asyncio.wait_for(asyncio.gather(followers["b"], return_exceptions=True), BEAT_S)
        after_leaving = (await sessions.compose(fields))["followers"]
    finally:
        followers["a"].cancel()
        await asyncio.gather(followers["a"], return_exceptions=True)
        await sessions.close()
    return counts, events_b, after_leaving


def test_two_followers_stay_two_while_the_presenter_moves_every_half_beat():
    counts, events_b, after_leaving = run_async(asyncio.wait_for(_busy_class(), 60))
    assert events_b > len(counts) // 2, "the follower did not receive the presenter's moves"
    assert counts == [2] * len(counts)
    assert after_leaving == 1
