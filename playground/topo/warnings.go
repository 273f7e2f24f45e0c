package topo

import (
	"fmt"

	"github.com/distributed-nav/distributed-nav/playground/controls"
)

// MaxWarningsPerKind is how many warnings of one kind (one message
// template, such as "unknown element <%s> inside <%s>") ParseXML reports;
// the rest are counted in one "and N more of the same kind" warning. A
// reader learns nothing from the 21st copy of a remark, and an input of a
// few MiB could otherwise ask for millions of them.
const MaxWarningsPerKind = 20

// warnings collects the remarks about one input, at most
// MaxWarningsPerKind of each kind. A warning past the cap costs a map
// lookup: its message is never formatted.
type warnings struct {
	list  []Warning
	kinds map[string]*warnKind
}

// warnKind counts the warnings of one kind.
type warnKind struct {
	shown, more int
	last        int // index in list of the last one shown
	lastLine    int // line of the last one counted
}

// add records a warning on line whose message is format with args; format
// is its kind.
func (w *warnings) add(line int, format string, args ...any) {
	if w.kinds == nil {
		w.kinds = map[string]*warnKind{}
	}
	k := w.kinds[format]
	if k == nil {
		k = &warnKind{}
		w.kinds[format] = k
	}
	k.lastLine = line
	if k.shown >= MaxWarningsPerKind {
		k.more++
		return
	}
	k.shown++
	k.last = len(w.list)
	msg := format
	if len(args) > 0 {
		msg = fmt.Sprintf(format, args...)
	}
	// Every message may quote the input (a name, a directive's keyword);
	// none may carry a control sequence to the terminal or the page.
	w.list = append(w.list, Warning{Line: line, Message: controls.Escape(msg)})
}

// result returns the warnings in input order, each capped kind followed by
// its "and N more of the same kind" line.
func (w *warnings) result() []Warning {
	extra := map[int]*warnKind{}
	for _, k := range w.kinds {
		if k.more > 0 {
			extra[k.last] = k
		}
	}
	if len(extra) == 0 {
		return w.list
	}
	out := make([]Warning, 0, len(w.list)+len(extra))
	for i, x := range w.list {
		out = append(out, x)
		if k := extra[i]; k != nil {
			out = append(out, Warning{Message: fmt.Sprintf("and %d more of the same kind, up to line %d", k.more, k.lastLine)})
		}
	}
	return out
}
