package ncclmsg

import (
	"strings"
	"testing"
)

// TestOlderSpan holds OlderSpan to the releases data/messages scanned: the
// path types list each of them, and every older wording's range runs
// between two of them.
func TestOlderSpan(t *testing.T) {
	c, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	scanned := map[string]bool{}
	oldest, newest := "", ""
	for r := range c.PathTypes {
		scanned[r] = true
		if r == Pinned {
			continue
		}
		if oldest == "" || releaseLess(r, oldest) {
			oldest = r
		}
		if newest == "" || releaseLess(newest, r) {
			newest = r
		}
	}
	short := func(r string) string {
		p := releaseParts(r)
		return strings.Join([]string{itoa(p[0]), itoa(p[1])}, ".")
	}
	if got := short(oldest) + "-" + short(newest); got != OlderSpan {
		t.Errorf("the catalog scanned %s to %s (%s), OlderSpan says %s", oldest, newest, got, OlderSpan)
	}
	if len(scanned) != 24 {
		t.Errorf("%d scanned releases, want 24 (2.7 to 2.29 and %s)", len(scanned), Pinned)
	}
	for _, e := range c.Entries {
		if e.Release == Pinned {
			continue
		}
		a, b, _ := strings.Cut(e.Releases, "..")
		if !scanned[a] || !scanned[b] || releaseLess(b, a) {
			t.Errorf("%s:%d: releases %q are not two scanned releases in order", e.File, e.Line, e.Releases)
		}
	}
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}

// sample prints a format with a small value for each conversion, the way
// NCCL would.
func sample(p pattern) string {
	var b strings.Builder
	for _, s := range p.segs {
		switch s.kind {
		case convNone:
			b.WriteString(s.lit)
		case convInt:
			b.WriteString("3")
		case convHex:
			b.WriteString("1f")
		case convOct:
			b.WriteString("7")
		case convFloat:
			b.WriteString("1.5")
		case convPtr:
			b.WriteString("0x7f00")
		case convChar:
			b.WriteString("c")
		default:
			b.WriteString("word")
		}
	}
	return b.String()
}

// TestPinnedBeforeOlder: a message every call of v2.30.7-1 prints is tied
// to a v2.30.7-1 call, or to an older wording only where that wording has
// more literal text (it then matches better), whatever release the log
// says it comes from.
func TestPinnedBeforeOlder(t *testing.T) {
	c, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, e := range c.Entries {
		if e.Release != Pinned || !e.pat.matchable() {
			continue
		}
		msg := sample(e.pat)
		if _, partial, ok := e.pat.match(strings.TrimRight(msg, " \t\r\n")); !ok || partial {
			continue // a sample the format itself does not read back
		}
		checked++
		for _, rel := range []string{"", "v2.7.8-1", "v2.18.6-1", Pinned} {
			m, ok := c.MatchRelease(e.Severity, msg, "", rel)
			if !ok {
				t.Errorf("%s:%d %q: no match", e.File, e.Line, msg)
				break
			}
			if m.Entry.Release != Pinned && m.Entry.Literal() <= e.Literal() {
				t.Errorf("%s:%d %q (release %q): tied to %s's %s:%d %q, which has no more literal text", e.File, e.Line, msg, rel, m.Entry.Releases, m.Entry.File, m.Entry.Line, m.Entry.Format)
				break
			}
		}
	}
	if checked < 1000 {
		t.Errorf("only %d pinned calls checked", checked)
	}
	t.Logf("%d pinned calls read back", checked)
}

// TestMatchReleaseAndPlace ranks equal matches on a small catalog: the
// pinned call first; among older wordings the one of the log's release
// (without a release the order of the message's words decides);
// an older call at the exact file:line a WARN names before a pinned call
// elsewhere; more literal text before all of these.
func TestMatchReleaseAndPlace(t *testing.T) {
	cur := "src/a.cc\t10\tWARN\tALL\tSegment %s failed (size %ld)\n" +
		"\t20\tINFO\tNET\tChannel %d via NET/%s/%d%s\n"
	old := "v2.8.4-1..v2.11.4-1\tsrc/net.cc\t196\tINFO\tNET\tChannel %d via NET/%s/%d%s%s\n" +
		"v2.7.8-1..v2.7.8-1\t\t147\tINFO\tNET\tChannel %d via NET/%s/%d%s%s%s\n" +
		"\tsrc/shm.h\t48\tWARN\tALL\tSegment %s failed (size %d)\\n\n" +
		"\tsrc/b.cc\t5\tINFO\tALL\tRing %d ready\n" +
		"v2.9.9-1..v2.10.3-1\t\t6\tINFO\tALL\tRing %d ready%s\n"
	c, err := Load(miniFS(cur, old, Pinned+"\t0\tLOC\nv2.7.8-1\t0\tLOC\nv2.9.9-1\t0\tLOC\n"))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		sev, msg, place, release string
		file                     string
		line                     int
	}{
		// the pinned call, whatever the release
		{"INFO", "Channel 0 via NET/Socket/0", "", "", "src/a.cc", 20},
		{"INFO", "Channel 0 via NET/Socket/0", "", "v2.7.8-1", "src/a.cc", 20},
		// older wordings alike: the one of the log's release
		{"INFO", "Ring 3 ready", "", "v2.7.8-1", "src/b.cc", 5},
		{"INFO", "Ring 3 ready", "", "v2.9.9-1", "src/b.cc", 6},
		// the place names the older call: it wins over the pinned one
		{"WARN", "Segment /dev/shm/x failed (size 9637888)", "shm.h:48", "", "src/shm.h", 48},
		{"WARN", "Segment /dev/shm/x failed (size 9637888)", "shm.h:49", "", "src/a.cc", 10},
		{"WARN", "Segment /dev/shm/x failed (size 9637888)", "", "v2.7.8-1", "src/a.cc", 10},
	}
	for _, tc := range cases {
		m, ok := c.MatchRelease(tc.sev, tc.msg, tc.place, tc.release)
		if !ok || m.Entry.File != tc.file || m.Entry.Line != tc.line {
			got := "nothing"
			if ok {
				got = m.Entry.File + ":" + itoa(m.Entry.Line)
			}
			t.Errorf("%q place %q release %q: %s, want %s:%d", tc.msg, tc.place, tc.release, got, tc.file, tc.line)
		}
	}
}
