package headless

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

func TestStaleContext(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{
		{nil, false},
		{errors.New("context deadline exceeded"), false},
		// The text chromedp returns for the CDP error -32000 after a navigation.
		{fmt.Errorf("poll: %w", errors.New("Cannot find context with specified id (-32000)")), true},
	} {
		if got := StaleContext(c.err); got != c.want {
			t.Errorf("StaleContext(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}

// Poll sees a page's state change, and gives up with an error at its
// timeout on one that never comes.
func TestPoll(t *testing.T) {
	ctx, cancel, err := New(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer cancel()
	ctx, stop := context.WithTimeout(ctx, time.Minute)
	defer stop()
	const page = `data:text/html,<title>t</title><script>setTimeout(() => { window.done = true }, 300)</script>`
	if err := chromedp.Do(ctx, chromedp.Navigate(page)); err != nil {
		t.Fatal(err)
	}
	if err := Poll(ctx, `window.done === true`, 10*time.Second, 20*time.Millisecond); err != nil {
		t.Errorf("the flag set after 300 ms: %v", err)
	}
	start := time.Now()
	if err := Poll(ctx, `window.never === true`, 500*time.Millisecond, 20*time.Millisecond); err == nil {
		t.Error("a flag never set: Poll returned no error")
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("a 500 ms poll returned after %v", d)
	}
}
