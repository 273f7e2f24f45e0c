package doctor

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/distributed-nav/distributed-nav/playground/ncclenv"
)

// checkBounded asserts the memory bounds every Summary must respect.
func checkBounded(t *testing.T, s *Summary, opts Options) {
	t.Helper()
	o := opts.withDefaults()
	for name, n := range map[string]int{
		"rings": len(s.Rings), "trees": len(s.Trees), "connections": len(s.Connections), "pairs": len(s.Pairs),
		"transports": len(s.Transports), "ranks": len(s.Ranks), "paths": len(s.Paths), "hosts": len(s.Hosts),
		"versions": len(s.Versions), "env": len(s.EnvSettings), "timeouts": len(s.Timeouts), "algos": len(s.AlgoChoices),
		"channels": len(s.Channels), "notes": len(s.Notes),
	} {
		if n > o.MaxItems {
			t.Errorf("%s: %d entries, cap %d", name, n, o.MaxItems)
		}
	}
	for _, e := range []Evidence{s.Warnings, s.TimeoutLines, s.Heartbeat, s.PeerLost, s.IBNoDevice, s.NetSocket} {
		if len(e.Lines) > o.MaxEvidence || len(e.Lines) > e.Count {
			t.Errorf("evidence keeps %d lines of %d (cap %d)", len(e.Lines), e.Count, o.MaxEvidence)
		}
		for _, l := range e.Lines {
			if len(l.Text) > o.MaxEvidenceChars+len("…") || !utf8.ValidString(l.Text) {
				t.Errorf("evidence text not bounded/valid: %q", l.Text)
			}
		}
	}
}

func TestBinaryGarbage(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var buf bytes.Buffer
	for buf.Len() < 1<<20 {
		var b [8]byte
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		buf.Write(b[:])
	}
	// one real line in the middle of the noise must still be read
	buf.WriteString("\nh:1:1 [0] NCCL INFO NCCL version 2.30.7+cuda13.0\n")
	for buf.Len() < 2<<20 {
		buf.WriteByte(byte(r.Uint32()))
	}
	s, err := ParseLog(&buf, Options{})
	if err != nil {
		t.Fatalf("ParseLog: %v", err)
	}
	if s.BinaryLines == 0 || s.Version() != "2.30.7" {
		t.Errorf("binary lines %d, version %q; want >0 and 2.30.7", s.BinaryLines, s.Version())
	}
	if !strings.Contains(strings.Join(s.Notes, "\n"), "binary") {
		t.Errorf("notes = %v, want a note about binary data", s.Notes)
	}
	checkBounded(t, s, Options{})
	Diagnose(s, ncclenv.Env{})
}

// synthLog streams a realistic multi-rank NCCL log of about size bytes
// without holding it in memory: eight ranks interleaving connection lines,
// with a header of version, init, ring and channel-count lines.
type synthLog struct {
	size, done int64
	buf        []byte
	i          int
}

func (g *synthLog) Read(p []byte) (int, error) {
	if g.done >= g.size {
		return 0, io.EOF
	}
	if len(g.buf) == 0 {
		g.buf = g.next()
	}
	n := copy(p, g.buf)
	if int64(n) > g.size-g.done {
		n = int(g.size - g.done)
	}
	g.buf = g.buf[n:]
	g.done += int64(n)
	return n, nil
}

func (g *synthLog) next() []byte {
	i := g.i
	g.i++
	r := i % 8
	pre := fmt.Sprintf("node%d:%d:%d [%d] NCCL INFO ", r/4, 1000+r, 2000+i%97, r%4)
	switch {
	case i < 8:
		return []byte(pre + "NCCL version 2.30.7+cuda13.0\n" + pre +
			fmt.Sprintf("ncclCommInitRankConfig comm 0x%x rank %d nranks 8 cudaDev %d nvmlDev %d busId %x000 commId 0x99 - Init COMPLETE\n", 0x5000+r, r, r%4, r%4, 0x18+r))
	case i%50 == 0:
		return []byte(pre + "Channel 03/16 :    0   1   2   3   4   5   6   7\n")
	case i%51 == 0:
		return []byte(pre + "16 coll channels, 16 collnet channels, 0 nvls channels, 32 p2p channels, 4 p2p channels per peer\n")
	case i%7 == 3:
		return []byte(fmt.Sprintf("%sChannel %02d/0 : %d[%d] -> %d[%d] [send] via NET/IB/%d/GDRDMA\n", pre, i%16, r, r%4, (r+4)%8, r%4, r%4))
	}
	return []byte(fmt.Sprintf("%sChannel %02d/1 : %d[%d] -> %d[%d] via P2P/CUMEM/read\n", pre, i%16, r, r%4, (r/4)*4+(r+1)%4, (r+1)%4))
}

func TestLargeLog50MB(t *testing.T) {
	if testing.Short() {
		t.Skip("50 MB parse skipped in -short mode")
	}
	const size = 50 << 20
	s, err := ParseLog(&synthLog{size: size}, Options{})
	if err != nil {
		t.Fatalf("ParseLog: %v", err)
	}
	if s.Bytes != size || s.Lines < 500000 {
		t.Errorf("read %d bytes in %d lines, want %d bytes and over 500k lines", s.Bytes, s.Lines, size)
	}
	if s.NRanks != 8 || s.Version() != "2.30.7" || s.ChannelCount() != 16 || !s.HasTransport("P2P/CUMEM") || !s.HasTransport("NET/IB") {
		t.Errorf("summary: nranks %d version %q channels %d transports %v", s.NRanks, s.Version(), s.ChannelCount(), s.TransportKinds())
	}
	if s.TotalConnections < 400000 || len(s.Connections) != DefaultMaxItems {
		t.Errorf("connections: total %d, kept %d; want the total counted and the list capped", s.TotalConnections, len(s.Connections))
	}
	checkBounded(t, s, Options{})
	if ds := Diagnose(s, ncclenv.Env{}); len(ds) != 0 {
		t.Errorf("diagnoses of a healthy synthetic log = %v", ids(ds))
	}
}

// Several ranks writing to one stream: whole lines interleave (the common
// case) and, without line buffering, one line can carry the end of another.
func TestInterleavedRanks(t *testing.T) {
	var b strings.Builder
	for ch := 0; ch < 4; ch++ {
		for r := 0; r < 4; r++ {
			fmt.Fprintf(&b, "host%d:%d:%d [%d] NCCL INFO Channel %02d/0 : %d[%d] -> %d[%d] via P2P/IPC/read\n", r/2, 100+r, 200+r, r%2, ch, r, r%2, (r+1)%4, (r+1)%2)
		}
	}
	b.WriteString("host0:100:200 [0] NCCL INFO Channhost1:103:203 [1] NCCL INFO Channel 09/0 : 3[1] -> 0[0] via SHM/direct\n")
	s := parseString(t, b.String())
	if s.TotalConnections != 17 || len(s.Pairs) != 5 || len(s.Hosts) != 2 {
		t.Errorf("connections %d pairs %v hosts %v", s.TotalConnections, s.Pairs, s.Hosts)
	}
	if last := s.Connections[16]; last.Channel != 9 || last.From != 3 || last.Host != "" || last.Transport != "SHM" {
		t.Errorf("glued line read as %+v", last)
	}
	if !strings.Contains(strings.Join(s.Notes, "\n"), "several processes") {
		t.Errorf("notes = %v, want a note about glued lines", s.Notes)
	}
}

// Every prefix of real lines must parse without panicking, and a line longer
// than MaxLineBytes is cut without losing the lines after it.
func TestTruncatedLines(t *testing.T) {
	lines := []string{
		"h:1:2 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] [send] via NET/IB/0/GDRDMA",
		"h:1:2 [0] NCCL INFO Trees [0] 1/-1/-1->0->-1 [1] 1/-1/-1->0->-1",
		"h:1:2 [0] NCCL INFO comm 0x1 rank 0 nranks 8 cudaDev 0 nvmlDev 0 busId 18000 commId 0x2 - Init COMPLETE",
		"h:1:2 [0] NCCL INFO     AllReduce |    10.0/  1.0 |    11.0/  2.0 |",
		"[rank0]:[E ProcessGroupNCCL.cpp:1] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1, OpType=ALLREDUCE, Timeout(ms)=600000) ran for 600001 milliseconds before timing out.",
		"h:1:2 [0] NCCL INFO GPU/0-1 :GPU/0-2 (1/20.0/NVL)",
	}
	var b strings.Builder
	for _, l := range lines {
		for i := 0; i <= len(l); i++ {
			b.WriteString(l[:i])
			b.WriteByte('\n')
		}
	}
	s := parseString(t, b.String())
	checkBounded(t, s, Options{})
	Diagnose(s, ncclenv.Env{})

	long := "h:1:2 [0] NCCL INFO Channel 00/02 :" + strings.Repeat("   1", 40000) + "\n" +
		"h:1:2 [0] NCCL INFO NCCL version 2.18.3+cuda12.1\n"
	s, err := ParseLog(strings.NewReader(long), Options{MaxLineBytes: 4096})
	if err != nil {
		t.Fatal(err)
	}
	if s.TruncatedLines != 1 || s.Version() != "2.18.3" || s.Lines != 2 {
		t.Errorf("truncated %d, version %q, lines %d", s.TruncatedLines, s.Version(), s.Lines)
	}
	if len(s.Rings) != 1 || len(s.Rings[0].Ranks) > 4096/4 {
		t.Errorf("the cut ring line should keep only what fits: %d rings", len(s.Rings))
	}
}

func TestLineEndingsAndUTF8(t *testing.T) {
	s := parseString(t, "h:1:1 [0] NCCL INFO Using network Socket\r\nh:1:1 [0] NCCL WARN bad \xff\xfe bytes\r\n\r\n")
	if s.Network != "Socket" || s.Lines != 3 || s.InvalidUTF8Lines != 1 {
		t.Errorf("network %q lines %d invalid %d", s.Network, s.Lines, s.InvalidUTF8Lines)
	}
	if w := s.Warnings.Lines[0].Text; !utf8.ValidString(w) || !strings.Contains(w, "\uFFFD") {
		t.Errorf("warning text %q should have the bad bytes replaced", w)
	}
}

type failingReader struct {
	data []byte
	err  error
}

func (f *failingReader) Read(p []byte) (int, error) {
	if len(f.data) == 0 {
		return 0, f.err
	}
	n := copy(p, f.data)
	f.data = f.data[n:]
	return n, nil
}

func TestReaderErrorKeepsPartialSummary(t *testing.T) {
	boom := errors.New("disk gone")
	s, err := ParseLog(&failingReader{data: []byte("h:1:1 [0] NCCL INFO NCCL version 2.21.5+cuda12.4\nh:1:1 [0] NCCL INFO Using net"), err: boom}, Options{})
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want it to wrap %v", err, boom)
	}
	if s == nil || s.Version() != "2.21.5" {
		t.Errorf("partial summary lost: %+v", s)
	}
	if _, err := ParseLog(nil, Options{}); err == nil {
		t.Error("nil reader: want an error")
	}
}

func TestContextAndByteLimit(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	s, err := ParseLogContext(ctx, &synthLog{size: 10 << 20}, Options{})
	if !errors.Is(err, context.Canceled) || s == nil || s.Bytes >= 10<<20 {
		t.Errorf("cancelled parse: err %v, read %d bytes", err, s.Bytes)
	}
	s, err = ParseLog(&synthLog{size: 10 << 20}, Options{MaxBytes: 1 << 20})
	if err != nil || s.Bytes < 1<<20 || s.Bytes > 1<<20+4096 || !strings.Contains(strings.Join(s.Notes, " "), "reading limit") {
		t.Errorf("byte limit: err %v bytes %d notes %v", err, s.Bytes, s.Notes)
	}
}

func TestEmptyAndUnrelatedInput(t *testing.T) {
	s := parseString(t, "")
	if s.Lines != 0 || len(Diagnose(s, ncclenv.Env{})) != 0 {
		t.Errorf("empty input: %+v", s)
	}
	s = parseString(t, "hello\nworld\n")
	if !strings.Contains(strings.Join(s.Notes, " "), "NCCL_DEBUG=INFO") {
		t.Errorf("notes = %v, want the NCCL_DEBUG hint", s.Notes)
	}
}

// Pasted text is rendered as text: markup in a log line comes out escaped.
func TestHTMLEscapesLogText(t *testing.T) {
	s := parseString(t, "h<b>:1:1 [0] transport.cc:1 NCCL WARN <script>alert('x')</script> & <img src=x onerror=alert(1)>\n")
	var out bytes.Buffer
	if err := WriteHTML(&out, s, Diagnose(s, ncclenv.Env{})); err != nil {
		t.Fatal(err)
	}
	html := out.String()
	for _, bad := range []string{"<script>", "<img", "<b>"} {
		if strings.Contains(html, bad) {
			t.Errorf("output contains raw %q:\n%s", bad, html)
		}
	}
	if !strings.Contains(html, "&lt;script&gt;") || !strings.Contains(html, `href="/notes/troubleshooting/"`) {
		t.Errorf("escaped text or links missing:\n%s", html)
	}
}

// Lines built to hit the costliest paths of the parser (many markers, many
// device tokens, long tree and ring lines, deep tables) must still be read
// in one pass with bounded lists.
func TestAdversarialLines(t *testing.T) {
	var b strings.Builder
	dev := "h:1:1 [0] NCCL INFO NET/IB : Using" + strings.Repeat(" [0]mlx5_x:1/IB", 4000) + "\n"
	glue := strings.Repeat("h:1:1 [0] NCCL INFO ", 3000) + "Using network IB\n"
	tree := "h:1:1 [0] NCCL INFO Trees" + strings.Repeat(" [0] 1/2/3->4->5", 3000) + "\n"
	ring := "h:1:1 [0] NCCL INFO Channel 00/64 :" + strings.Repeat(" 7", 20000) + "\n"
	warn := "h:1:1 [0] x.cc:1 NCCL WARN" + strings.Repeat(" Socket recv failed", 2000) + "\n"
	for b.Len() < 8<<20 {
		b.WriteString(dev)
		b.WriteString(glue)
		b.WriteString(tree)
		b.WriteString(ring)
		b.WriteString(warn)
	}
	s := parseString(t, b.String())
	checkBounded(t, s, Options{})
	if len(s.NetDevices) != 1 || s.PeerLost.Count == 0 || s.Network != "IB" {
		t.Errorf("devices %v peer-lost %d network %q", s.NetDevices, s.PeerLost.Count, s.Network)
	}
	Diagnose(s, ncclenv.Env{})
}
