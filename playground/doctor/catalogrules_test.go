package doctor

import (
	"strings"
	"testing"

	"github.com/distributed-nav/distributed-nav/playground/ncclenv"
	"github.com/distributed-nav/distributed-nav/playground/ncclmsg"
)

// TestRuleMessagesInCatalog checks that every catalog format a rule lists
// is a real entry of NCCL's message catalog (the pinned release or an older
// wording), so a typo cannot silently disable a rule.
func TestRuleMessagesInCatalog(t *testing.T) {
	cat, err := ncclmsg.Default()
	if err != nil {
		t.Fatal(err)
	}
	formats := map[string]bool{}
	for _, e := range cat.Entries {
		formats[e.Format] = true
	}
	n := 0
	for _, r := range Rules() {
		for _, f := range r.Messages {
			n++
			if !formats[f] {
				t.Errorf("rule %s: %q is no catalog format", r.ID, f)
			}
		}
	}
	if n == 0 {
		t.Fatal("no rule lists catalog formats")
	}
}

// TestRuleByCatalogEntry: a line in a wording no substring of the rule
// names is still evidence when the catalog ties it to a listed format, and
// a line both forms match counts once.
func TestRuleByCatalogEntry(t *testing.T) {
	// The v2.20-2.22 wording of the async event (the host prefix makes it
	// an NCCL line the catalog can match).
	log := "h1:1:2 [0] transport/net_ib.cc:100 NCCL WARN NET/IB : mlx5_0:1 Got async event : port error\n"
	s, err := ParseLog(strings.NewReader(log), Options{})
	if err != nil {
		t.Fatal(err)
	}
	e := s.ruleHits["ib-async-event"]
	if e == nil || e.Count != 1 {
		t.Fatalf("ib-async-event evidence = %+v, want one line", e)
	}
}

// TestMTUMismatch: the "mtu" field of the IB connection lines of two hosts
// differs (5 = 4096 B, 3 = 1024 B in the verbs enum), so the completion
// error names both.
func TestMTUMismatch(t *testing.T) {
	log := strings.Join([]string{
		"hostA:10:20 [0] NCCL INFO NET/IB: Dev 0 Port 1 qpn 1839 mtu 5 LID 5",
		"hostB:11:21 [0] NCCL INFO NET/IB: Dev 0 Port 1 qpn 77 mtu 3 LID 9",
		"hostA:10:22 [0] transport/net_ib.cc:1696 NCCL WARN NET/IB : Got completion from peer 10.0.0.2<1> with status=12 opcode=0 len=0 vendor err 129 (Send)",
	}, "\n")
	s, err := ParseLog(strings.NewReader(log), Options{})
	if err != nil {
		t.Fatal(err)
	}
	vals, hosts := s.factValues("mtu")
	if strings.Join(vals, ",") != "3,5" || strings.Join(hosts["5"], ",") != "hostA" || strings.Join(hosts["3"], ",") != "hostB" {
		t.Fatalf("mtu facts %v %v", vals, hosts)
	}
	d := find(Diagnose(s, ncclenv.Env{}), "ib-completion-error")
	for _, want := range []string{"mtu 3 (1024 B) on hostB", "mtu 5 (4096 B) on hostA", "connection lines show different MTUs"} {
		if !strings.Contains(d.Explanation, want) {
			t.Errorf("explanation lacks %q: %s", want, d.Explanation)
		}
	}
	// One MTU everywhere: no mismatch sentence.
	s, _ = ParseLog(strings.NewReader(strings.Replace(log, "mtu 3", "mtu 5", 1)), Options{})
	if d := find(Diagnose(s, ncclenv.Env{}), "ib-completion-error"); strings.Contains(d.Explanation, "connection lines show different MTUs") {
		t.Errorf("mismatch named for one MTU: %s", d.Explanation)
	}
}

func TestPGKeyAndLauncherRank(t *testing.T) {
	for _, tt := range []struct{ tag, key string }{
		{"PG ID 11 PG GUID 119", "119"},
		{"PG ID 0 PG GUID 0(default_pg)", "0"},
		{"PG 119", "119"},
		{"", ""},
		{"PG x", "PG x"},
	} {
		if got := pgKey(tt.tag); got != tt.key {
			t.Errorf("pgKey(%q) = %q, want %q", tt.tag, got, tt.key)
		}
	}
	for _, tt := range []struct {
		line string
		rank int
	}{
		{"[rank13]:[E218 04:54:22] [Rank 1] Watchdog caught", 13},
		{" 2025-02-18 12:54 [rank7]:[E218] x", 7},
		{"[Rank 1] Watchdog caught", -1},
		{"[rank3] no colon", -1},
	} {
		if got := launcherRank(tt.line); got != tt.rank {
			t.Errorf("launcherRank(%q) = %d, want %d", tt.line, got, tt.rank)
		}
	}
}

func TestHeartbeatScope(t *testing.T) {
	lines := []LineRef{
		{Line: 1, Text: "[rank0]:[E1019 01:04:03.356] [PG 3 Rank 0] Heartbeat monitor timed out! Process will be terminated after dumping debug info. workMetaList_.size()=121"},
		{Line: 2, Text: "[rank7]:[E1019 01:04:03.357] [PG 3 Rank 7] First PG on this rank that detected no heartbeat of its watchdog."},
		{Line: 3, Text: "[rank2]:[F1019 01:14:03.356] [PG ID 1 PG GUID 5 Rank 2] watchdog got stuck for 600 seconds workMetaList_.size()=7"},
	}
	got := heartbeatScope(lines)
	// Two groups (PG 3 and GUID 5), three launcher ranks, the largest list.
	for _, want := range []string{"PG 3, PG ID 1 PG GUID 5", "on 3 process(es)", "still held 121 collective(s)"} {
		if !strings.Contains(got, want) {
			t.Errorf("scope lacks %q: %q", want, got)
		}
	}
	if heartbeatScope(nil) != "" {
		t.Error("scope of no lines")
	}
}

// TestRuleMessagesFire fills every catalog format a rule lists with sample
// values (one line per format, with the severity and file the catalog
// gives) and checks that the line is evidence of that rule: whatever
// release printed it, the wording NCCL used reaches the rule.
func TestRuleMessagesFire(t *testing.T) {
	cat, err := ncclmsg.Default()
	if err != nil {
		t.Fatal(err)
	}
	entry := map[string]*ncclmsg.Entry{}
	for _, e := range cat.Entries {
		if _, ok := entry[e.Format]; !ok {
			entry[e.Format] = e
		}
	}
	fill := strings.NewReplacer("%llx", "1a", "%lx", "1a", "%zu", "4096", "%zi", "4096", "%ld", "4096", "%d", "7", "%u", "7", "%x", "1a", "%p", "0x55", "%s", "mlx5_0", "%i", "7")
	n := 0
	for _, r := range Rules() {
		for _, f := range r.Messages {
			if strings.Contains(f, "\n") {
				continue // NCCL prints these over several lines; the first is matched by substring rules
			}
			e := entry[f]
			line := "h1:1:2 [0] " + e.File + ":1 NCCL " + e.Severity + " " + fill.Replace(f) + "\n"
			if e.Severity == "INFO" || e.Severity == "TRACE" {
				line = "h1:1:2 [0] NCCL " + e.Severity + " " + fill.Replace(f) + "\n"
			}
			s, err := ParseLog(strings.NewReader(line), Options{})
			if err != nil {
				t.Fatal(err)
			}
			n++
			if h := s.ruleHits[r.ID]; h == nil || h.Count != 1 {
				t.Errorf("rule %s: format %q as %q is not evidence (%+v)", r.ID, f, line, h)
			}
		}
	}
	if n < 20 {
		t.Errorf("only %d formats tried", n)
	}
}
