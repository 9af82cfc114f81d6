"""A seat on a floating license held for as long as a block of code runs: checked out on entry,
renewed in the background (the heartbeat) before its lease ends, given back on exit."""

from __future__ import annotations

import threading
from datetime import datetime
from types import TracebackType
from typing import TYPE_CHECKING, Any, Dict, Optional, Type

from .errors import LicensingApiError, LicensingError

if TYPE_CHECKING:
    from .client import LicensingClient


class SeatLease:
    """``with client.seat(key, hwuid, app_id) as seat:``. Raises LicensingError with the
    service's code (``no_seat_available``…) when no seat is given. ``interval_seconds``: how often
    the heartbeat renews the seat; by default a third of the lease the service granted."""

    def __init__(
        self, client: LicensingClient, key: str, hwuid: str, app_id: str, interval_seconds: Optional[float] = None
    ) -> None:
        self.client = client
        self.key = key
        self.hwuid = hwuid
        self.app_id = app_id
        self.interval = interval_seconds
        self.answer: Dict[str, Any] = {}
        self.last_error: Optional[LicensingError] = None
        self._stop = threading.Event()
        self._thread: Optional[threading.Thread] = None

    def __enter__(self) -> SeatLease:
        self.answer = self.client.checkout(self.key, self.hwuid, self.app_id)
        if not self.answer.get("valid"):
            code = str(self.answer.get("code") or "no_seat_available")
            raise LicensingError(code, f"No seat: {code}")
        self._thread = threading.Thread(target=self._beat_until_stopped, name="licensing-seat-heartbeat", daemon=True)
        self._thread.start()
        return self

    def __exit__(
        self,
        kind: Optional[Type[BaseException]],
        error: Optional[BaseException],
        trace: Optional[TracebackType],
    ) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        try:
            self.client.checkin(self.key, self.hwuid, self.app_id)
        except LicensingApiError:
            pass  # the lease ends by itself; nothing to do on the way out

    def beat(self) -> Dict[str, Any]:
        """One heartbeat now: renews the seat; answers the service's answer."""
        self.answer = self.client.checkout(self.key, self.hwuid, self.app_id)
        return self.answer

    def _beat_until_stopped(self) -> None:
        while not self._stop.wait(self._next_interval()):
            try:
                self.beat()
                self.last_error = None
            except LicensingError as error:
                # Offline for a moment: the seat holds until its lease ends; try again next time.
                self.last_error = error

    def _next_interval(self) -> float:
        if self.interval is not None:
            return self.interval
        lease_end = self.answer.get("lease_expires_at")
        if isinstance(lease_end, str):
            remaining = datetime.fromisoformat(lease_end.replace("Z", "+00:00")).timestamp() - datetime.now().timestamp()
            return max(5.0, remaining / 3)
        return 60.0
