package licensing

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// ClockState is the clock-rollback guard: the latest time this machine has seen, kept between
// runs so a clock set back cannot stretch an expired license file. Milliseconds since 1970, the
// same JSON as the TypeScript and Python SDKs ({"lastSeen", "vouchedAt"}).
//
// VouchedAt is the latest issue time of a file, list or token checked here (nil before the
// first). A check issued after it resets the guard: the service has vouched for a later time.
//
// A *ClockState is itself a Store: pass it to a check and read it afterwards.
type ClockState struct {
	LastSeen  int64  `json:"lastSeen"`
	VouchedAt *int64 `json:"vouchedAt,omitempty"`
}

// Load answers a copy of the state.
func (c *ClockState) Load() (*ClockState, error) {
	held := *c
	if c.VouchedAt != nil {
		vouched := *c.VouchedAt
		held.VouchedAt = &vouched
	}
	return &held, nil
}

// Save replaces the state.
func (c *ClockState) Save(value ClockState) error {
	*c = value
	return nil
}

// Store is where the clock guard or the revocations in force live between runs: a file, the
// registry, your own settings. Load answers nil when nothing is stored yet.
type Store[T any] interface {
	Load() (*T, error)
	Save(value T) error
}

// MemoryStore keeps a value in memory, for tests and for programs that persist it themselves.
type MemoryStore[T any] struct {
	mu    sync.Mutex
	Value *T
}

func (m *MemoryStore[T]) Load() (*T, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.Value == nil {
		return nil, nil
	}
	held := *m.Value
	return &held, nil
}

func (m *MemoryStore[T]) Save(value T) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.Value = &value
	return nil
}

// JSONFile keeps a value as JSON in a file (written to a temporary file, then renamed, so a
// crash never leaves half a file). A missing file loads as nil.
type JSONFile[T any] struct {
	Path string
}

func (f JSONFile[T]) Load() (*T, error) {
	data, err := os.ReadFile(f.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var value T
	if err := json.Unmarshal(data, &value); err != nil {
		return nil, fmt.Errorf("%s: %w", f.Path, err)
	}
	return &value, nil
}

func (f JSONFile[T]) Save(value T) error {
	data, err := json.Marshal(value)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(f.Path), 0o700); err != nil {
		return err
	}
	temporary := f.Path + ".tmp"
	if err := os.WriteFile(temporary, data, 0o600); err != nil {
		return err
	}
	return os.Rename(temporary, f.Path)
}

func nowMs(now func() time.Time) int64 {
	if now == nil {
		return time.Now().UnixMilli()
	}
	return now().UnixMilli()
}

func loadClock(store Store[ClockState]) (*ClockState, error) {
	if store == nil {
		return nil, nil
	}
	held, err := store.Load()
	if err != nil {
		return nil, &Error{Kind: KindFile, Code: "clock_unavailable", Message: "The clock guard could not be read", Err: err}
	}
	return held, nil
}

// vouchForClock: the service vouched for issuedAt (a list or token that passed its checks).
// When that is newer than anything checked before and the clock is not before it, the guard
// resets.
func vouchForClock(store Store[ClockState], issuedAt, now, toleranceMs int64) error {
	held, err := loadClock(store)
	if err != nil {
		return err
	}
	reset := held != nil && held.VouchedAt != nil && issuedAt > *held.VouchedAt && now >= issuedAt-toleranceMs
	return rememberClock(store, held, issuedAt, &now, reset)
}

// rememberClock keeps what a check learnt; saves only a change.
func rememberClock(store Store[ClockState], held *ClockState, vouchedAt int64, seenAt *int64, reset bool) error {
	var lastSeen int64
	switch {
	case seenAt == nil:
		if held != nil {
			lastSeen = held.LastSeen
		}
	case reset || held == nil:
		lastSeen = *seenAt
	default:
		lastSeen = maxInt64(*seenAt, held.LastSeen)
	}
	if held != nil && held.VouchedAt != nil {
		vouchedAt = maxInt64(vouchedAt, *held.VouchedAt)
	}
	if held != nil && held.LastSeen == lastSeen && held.VouchedAt != nil && *held.VouchedAt == vouchedAt {
		return nil
	}
	if err := store.Save(ClockState{LastSeen: lastSeen, VouchedAt: &vouchedAt}); err != nil {
		return &Error{Kind: KindFile, Code: "clock_unavailable", Message: "The clock guard could not be saved", Err: err}
	}
	return nil
}

func maxInt64(a, b int64) int64 {
	if a > b {
		return a
	}
	return b
}
