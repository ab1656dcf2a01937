package top

import (
	"context"
	"io"
	"strings"
	"time"
)

// Config is one live view.
type Config struct {
	Source *Source
	// Every is the refresh interval; 0 means a second.
	Every time.Duration
	// Size reports the terminal's width and height (80×24 when it
	// cannot tell).
	Size func() (width, height int)
}

// Run draws the view to out until q (or Ctrl-C, or Ctrl-D) arrives on
// keys, keys closes, or ctx ends. Any other key of the sort keys re-sorts
// at once. It uses the alternate screen and restores the terminal's
// screen and cursor on return.
func Run(ctx context.Context, cfg Config, keys <-chan byte, out io.Writer) error {
	every := cfg.Every
	if every <= 0 {
		every = time.Second
	}
	if _, err := io.WriteString(out, esc+"?1049h"+esc+"?25l"); err != nil { // alternate screen, no cursor
		return err
	}
	defer io.WriteString(out, esc+"?25h"+esc+"?1049l") //nolint:errcheck // the terminal is going away either way
	v := view{cfg: cfg, out: out, key: ByRate}
	tick := time.NewTicker(every)
	defer tick.Stop()
	v.refresh(ctx)
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
			v.refresh(ctx)
		case k, ok := <-keys:
			switch {
			case !ok, k == 'q', k == 'Q', k == 3, k == 4: // Ctrl-C and Ctrl-D in raw mode
				return nil
			case keyNames[Key(k)] != "":
				v.key = Key(k)
				v.frame.Sort = v.key
				sortRows(v.frame.Rows, v.key)
				v.draw()
			}
		}
	}
}

// view is the state between refreshes.
type view struct {
	cfg   Config
	out   io.Writer
	key   Key
	prev  Snapshot
	frame Frame
}

func (v *view) refresh(ctx context.Context) {
	fctx, cancel := context.WithTimeout(ctx, 900*time.Millisecond)
	defer cancel()
	snap, err := v.cfg.Source.Fetch(fctx)
	if err != nil {
		v.frame.Err = err
	} else {
		v.frame = NewFrame(v.prev, snap, v.key)
		v.prev = snap
	}
	v.draw()
}

// draw writes the frame over the previous one: home, each line cleared
// to its end, then the rest of the screen cleared. Lines end with \r\n:
// in raw mode \n only moves down.
func (v *view) draw() {
	w, h := 80, 24
	if v.cfg.Size != nil {
		if cw, ch := v.cfg.Size(); cw > 0 && ch > 0 {
			w, h = cw, ch
		}
	}
	lines := Render(v.frame, v.cfg.Source.Admin, w, h)
	var b strings.Builder
	b.WriteString(esc + "H")
	for i, l := range lines {
		b.WriteString(l)
		b.WriteString(esc + "K")
		if i < len(lines)-1 {
			b.WriteString("\r\n")
		}
	}
	b.WriteString(esc + "J")
	io.WriteString(v.out, b.String()) //nolint:errcheck // a terminal that went away ends the session through its keys
}
