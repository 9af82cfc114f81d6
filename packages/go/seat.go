package licensing

import (
	"context"
	"sync"
	"time"
)

// Seat is a seat on a floating license held while your program works: checked out by
// Client.Seat, renewed in the background (the heartbeat) before its lease ends, given back by
// Close. The heartbeat stops when the context given to Client.Seat ends or at Close; a seat
// not given back lapses by itself when its lease ends.
type Seat struct {
	client   *Client
	request  LicenseRequest
	interval time.Duration

	mu      sync.Mutex
	answer  *Verification
	lastErr error

	stop      context.CancelFunc
	done      chan struct{}
	closeOnce sync.Once
	closeErr  error
}

// Seat checks a seat out and keeps it: request.HWUID is required. interval is how often the
// heartbeat renews it; 0: a third of the lease the service granted (at least 5 s). When no seat
// is given, the error is an *Error (KindSeat) whose Code is the service's (no_seat_available,
// not_floating…). Call Close when done (defer seat.Close()).
func (c *Client) Seat(ctx context.Context, request LicenseRequest, interval time.Duration) (*Seat, error) {
	answer, err := c.Checkout(ctx, request)
	if err != nil {
		return nil, err
	}
	if !answer.Valid {
		code := answer.Code
		if code == "" {
			code = "no_seat_available"
		}
		return nil, &Error{Kind: KindSeat, Code: code, Message: "No seat: " + code}
	}
	heartbeat, stop := context.WithCancel(ctx)
	seat := &Seat{client: c, request: request, interval: interval, answer: answer, stop: stop, done: make(chan struct{})}
	go seat.beatUntilStopped(ctx, heartbeat)
	return seat, nil
}

// Answer is the service's latest answer for this seat (LeaseExpiresAt, LicenseToken…).
func (s *Seat) Answer() *Verification {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.answer
}

// LastError is the error of the latest background heartbeat, nil once one succeeds again: the
// seat holds until its lease ends, and the next heartbeat tries again.
func (s *Seat) LastError() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastErr
}

// Beat renews the seat now and answers the service's answer.
func (s *Seat) Beat(ctx context.Context) (*Verification, error) {
	answer, err := s.client.Checkout(ctx, s.request)
	s.mu.Lock()
	defer s.mu.Unlock()
	if err == nil {
		s.answer = answer
	}
	if err == nil || ctx.Err() == nil {
		s.lastErr = err // a heartbeat cut short by Close is no failure
	}
	return answer, err
}

// Close stops the heartbeat, waiting for one in flight to be answered, and gives the seat back.
// It answers the checkin's error, which a program on its way out may ignore: the lease ends by
// itself. Closing again does nothing.
func (s *Seat) Close() error {
	s.closeOnce.Do(func() {
		s.stop()
		<-s.done
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_, s.closeErr = s.client.Checkin(ctx, s.request.Key, s.request.HWUID, s.request.AppID)
	})
	return s.closeErr
}

func (s *Seat) beatUntilStopped(ctx, stopped context.Context) {
	defer close(s.done)
	for {
		timer := time.NewTimer(s.nextInterval())
		select {
		case <-stopped.Done():
			timer.Stop()
			return
		case <-timer.C:
			// Under the caller's context, not the one Close ends: Close waits for a heartbeat in
			// flight to be answered, so the service never renews the seat after its checkin (an
			// abandoned request may still be served after the checkin that follows it).
			_, _ = s.Beat(ctx)
		}
	}
}

func (s *Seat) nextInterval() time.Duration {
	if s.interval > 0 {
		return s.interval
	}
	answer := s.Answer()
	if end, err := time.Parse(time.RFC3339Nano, answer.LeaseExpiresAt); err == nil {
		third := time.Until(end) / 3
		if third < 5*time.Second {
			return 5 * time.Second
		}
		return third
	}
	return time.Minute
}
