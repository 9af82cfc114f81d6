"""The clock-rollback guard: the latest time this machine has seen, kept between runs, so a
clock set back cannot stretch an expired license file. Stored in milliseconds since 1970, the
same shape as the TypeScript SDK's ``{lastSeen, vouchedAt}``."""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Callable, Dict, Generic, Optional, Protocol, TypeVar, Union

T = TypeVar("T")


class StateStore(Protocol[T]):
    """Where the clock state or the revocations live between runs (a file, the registry…)."""

    def load(self) -> Optional[T]: ...

    def save(self, value: T) -> None: ...


@dataclass
class ClockState:
    """``last_seen``: the latest time this machine has seen (ms). ``vouched_at``: the latest issue
    time of a file, list or token checked here (ms); None before the first. A check issued after
    ``vouched_at`` resets the guard: the service has vouched for a later time since."""

    last_seen: int = 0
    vouched_at: Optional[int] = None

    def to_json(self) -> Dict[str, int]:
        return {"lastSeen": self.last_seen, **({} if self.vouched_at is None else {"vouchedAt": self.vouched_at})}

    @classmethod
    def from_json(cls, value: Dict[str, Any]) -> ClockState:
        vouched = value.get("vouchedAt")
        return cls(int(value.get("lastSeen", 0)), None if vouched is None else int(vouched))


class MemoryStore(Generic[T]):
    """A store kept in memory, for tests and for programs that persist it themselves."""

    def __init__(self, value: Optional[T] = None) -> None:
        self.value = value

    def load(self) -> Optional[T]:
        return self.value

    def save(self, value: T) -> None:
        self.value = value


ClockInput = Union[ClockState, StateStore[ClockState]]
Now = Callable[[], datetime]


def now_ms(now: Optional[Now]) -> int:
    moment = now() if now is not None else datetime.now(timezone.utc)
    return math.floor(moment.timestamp() * 1000)


def load_clock(state: Optional[ClockInput]) -> Optional[ClockState]:
    if state is None:
        return None
    if isinstance(state, ClockState):
        return state
    return state.load()


def vouch_for_clock(state: ClockInput, issued_at: int, now: int, tolerance_ms: int) -> None:
    """The service vouched for ``issued_at`` (a list or token that passed its checks): when that
    is newer than anything checked before and the clock is not before it, the guard resets."""
    clock = load_clock(state)
    reset = (
        clock is not None
        and clock.vouched_at is not None
        and issued_at > clock.vouched_at
        and now >= issued_at - tolerance_ms
    )
    remember_clock(state, clock, vouched_at=issued_at, seen_at=now, reset=reset)


def remember_clock(
    state: ClockInput,
    held: Optional[ClockState],
    vouched_at: int,
    seen_at: Optional[int] = None,
    reset: bool = False,
) -> None:
    """Keeps what a check learnt; saves only a change."""
    if seen_at is None:
        last_seen = held.last_seen if held is not None else 0
    elif reset or held is None:
        last_seen = seen_at
    else:
        last_seen = max(seen_at, held.last_seen)
    if held is not None and held.vouched_at is not None:
        vouched_at = max(vouched_at, held.vouched_at)
    if held is not None and held.last_seen == last_seen and held.vouched_at == vouched_at:
        return
    if isinstance(state, ClockState):
        state.last_seen = last_seen
        state.vouched_at = vouched_at
    else:
        state.save(ClockState(last_seen, vouched_at))
