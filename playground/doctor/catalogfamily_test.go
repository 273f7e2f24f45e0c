package doctor

import (
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/distributed-nav/distributed-nav/playground/ncclenv"
	"github.com/distributed-nav/distributed-nav/playground/ncclmsg"
)

// TestMsgFamiliesCoverCatalog holds the family table to the catalog: every
// WARN call of the pinned release (data/messages/nccl-v2.30.7-1.tsv) and
// every older wording must belong to a family, so that no warning the
// catalog knows falls outside the generic reading. A new source file in a
// later release fails here until the table names it.
func TestMsgFamiliesCoverCatalog(t *testing.T) {
	cat, err := ncclmsg.Default()
	if err != nil {
		t.Fatal(err)
	}
	missing := map[string]int{}
	warns := 0
	for _, e := range cat.Entries {
		if e.Severity != "WARN" {
			continue
		}
		warns++
		if familyOf("", e) < 0 {
			missing[e.File]++
		}
	}
	if warns < 600 {
		t.Fatalf("only %d WARN entries in the catalog; want the whole of v2.30.7-1 (692) and older wordings", warns)
	}
	for f, n := range missing {
		t.Errorf("%s: %d WARN call(s) in no family", f, n)
	}
}

// TestMsgFamilyLinks checks that every variable a family links exists in
// the variable tables.
func TestMsgFamilyLinks(t *testing.T) {
	idx := anchorIndex(t)
	reg, err := ncclenv.DefaultRegistry()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range msgFamilies {
		if f.key == "" || f.cause == "" || f.setting == "" || f.check == "" {
			t.Errorf("family %q lacks a key, cause, setting or check", f.name)
		}
		for _, v := range f.env {
			checkLink(t, idx, reg, envLink(v))
		}
	}
}

// TestGenericReadings feeds lines the catalog knows but no rule covers
// (formats copied from data/messages/nccl-v2.30.7-1.tsv, at the file and
// line NCCL prints them) and checks the family reading: its ID, that it is
// marked generic, names the setting and the check, links the source line
// at the pinned tag, and comes after every rule.
func TestGenericReadings(t *testing.T) {
	for _, tc := range []struct {
		name, log string
		want      []string // generic IDs, in order
		has       string   // a phrase of the reading
	}{
		{"gdrcopy", "h:1:2 [0] misc/gdrwrap.cc:148 NCCL WARN gdr_pin_buffer(addr 7f00, size 65536) failed: -22\n",
			[]string{"generic-memory"}, "NCCL_GDRCOPY_ENABLE"},
		{"bootstrap root", "h:1:2 [0] bootstrap.cc:348 NCCL WARN Bootstrap Root : rank 3 of 8 ranks has already checked in\n",
			[]string{"generic-bootstrap"}, "NCCL_COMM_ID"},
		{"multi-node nvlink", "h:1:2 [0] mnnvl.cc:74 NCCL WARN MNNVL (cliqueSize 4) is available but not working on this system. Check the IMEX channel configuration (/dev/nvidia-caps-imex-channels). Set NCCL_MNNVL_ENABLE=0 to ignore this issue.\n",
			[]string{"generic-nvls"}, "NCCL_MNNVL_ENABLE=0"},
		{"cuda failure in setup code", "h:1:2 [0] init.cc:426 NCCL WARN Cuda failure 'operation not supported'\n",
			[]string{"generic-cuda"}, "operation not supported"},
		{"error return without a warning", "h:1:2 [0] NCCL INFO transport/net_ib.cc:659 -> 2\nh:1:2 [0] NCCL INFO init.cc:1222 -> 2\n",
			[]string{"generic-ib"}, "ibv_devinfo"},
		{"IB init trace before a socket fallback", "h:1:2 [0] NCCL INFO Failed to open libibverbs.so[.1]\nh:1:2 [0] NCCL INFO transport/net_ib.cc:852 -> 3\nh:1:2 [0] NCCL INFO Using network Socket\n",
			nil, ""},
		{"proxy alone", "h:1:2 [0] proxy.cc:1485 NCCL WARN [Service thread] Error encountered progressing operation=Connect, res=3, closing connection\n",
			[]string{"generic-proxy"}, "first WARN"},
		{"proxy with a cause", "h:1:2 [0] misc/gdrwrap.cc:148 NCCL WARN gdr_pin_buffer(addr 7f00, size 65536) failed: -22\nh:1:2 [0] proxy.cc:1485 NCCL WARN [Service thread] Error encountered progressing operation=Connect, res=3, closing connection\n",
			[]string{"generic-memory"}, "gdrdrv"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ds := Diagnose(parseString(t, tc.log), ncclenv.Env{})
			var got []string
			firstGeneric := -1
			for i, d := range ds {
				if !isGeneric(d.ID) {
					if firstGeneric >= 0 {
						t.Errorf("rule %s after the generic reading %s", d.ID, ds[firstGeneric].ID)
					}
					continue
				}
				if firstGeneric < 0 {
					firstGeneric = i
				}
				got = append(got, d.ID)
				for _, s := range []string{"Generic reading", "Fix: look at ", "Check: ", "https://github.com/NVIDIA/nccl/blob/v2.", tc.has} {
					if !strings.Contains(d.Explanation, s) {
						t.Errorf("%s: no %q in %q", d.ID, s, d.Explanation)
					}
				}
				if d.Severity != Warning || len(d.Evidence) == 0 {
					t.Errorf("%s: severity %v, %d evidence line(s)", d.ID, d.Severity, len(d.Evidence))
				}
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("generic readings %v, want %v (all: %v)", got, tc.want, ids(ds))
			}
		})
	}
}

// TestGenericReadingsLeaveRulesAlone runs every published log with and
// without the generic readings: the rules' diagnoses (IDs, severity, text,
// evidence, order) must be the same, every generic reading comes after
// them, and none reads a line a rule already explains.
func TestGenericReadingsLeaveRulesAlone(t *testing.T) {
	logs, err := filepath.Glob(filepath.Join(logsDir, "*.log"))
	if err != nil || len(logs) == 0 {
		t.Fatalf("no logs in %s: %v", logsDir, err)
	}
	defer func() { genericOff = false }()
	for _, lp := range logs {
		s := parseFile(t, lp)
		genericOff = true
		before := Diagnose(s, ncclenv.Env{})
		genericOff = false
		after := Diagnose(s, ncclenv.Env{})
		var rules []Diagnosis
		explained := map[int]bool{}
		for i, d := range after {
			if isGeneric(d.ID) {
				for _, l := range d.Evidence {
					if explained[l.Line] {
						t.Errorf("%s: %s reads line %d, which a rule explains", filepath.Base(lp), d.ID, l.Line)
					}
				}
				continue
			}
			if i > 0 && isGeneric(after[i-1].ID) {
				t.Errorf("%s: rule %s after a generic reading", filepath.Base(lp), d.ID)
			}
			rules = append(rules, d)
			if d.ID != "nccl-warn" {
				for _, l := range d.Evidence {
					explained[l.Line] = true
				}
			}
		}
		if len(rules) == 0 && len(before) == 0 {
			continue
		}
		if !reflect.DeepEqual(rules, before) {
			t.Errorf("%s: the generic readings changed the rules' diagnoses: %v, want %v", filepath.Base(lp), ids(rules), ids(before))
		}
	}
}

// TestIBWantedNoDevice: "NET/IB : No device found." with an environment
// that asks for InfiniBand (NCCL_IB_DISABLE=0 or NCCL_IB_HCA) is a failure
// even when the excerpt does not show the socket transport taking over;
// without such a setting the same line alone says nothing.
func TestIBWantedNoDevice(t *testing.T) {
	const noDev = "h:1:2 [0] NCCL INFO NET/IB : No device found.\n"
	for _, tc := range []struct {
		name, log string
		fires     bool
		has       string // the cause the explanation names
	}{
		{"IB_DISABLE=0", "h:1:2 [0] NCCL INFO NCCL_IB_DISABLE set by environment to 0.\n" + noDev, true, "/dev/infiniband"},
		{"IB_HCA", "h:1:2 [0] NCCL INFO NCCL_IB_HCA set by environment to mlx5_0\n" + noDev, true, "NCCL_IB_HCA=mlx5_0 matched no active port"},
		{"no setting", noDev, false, ""},
		{"IB disabled", "h:1:2 [0] NCCL INFO NCCL_IB_DISABLE set by environment to 1.\n" + noDev, false, ""},
		// nvidia/nccl#451's wording (NCCL 2.8): a device listed but not opened.
		{"open failed", "h:1:2 [0] transport/net_ib.cc:148 NCCL WARN NET/IB : Unable to open device mlx5_bond_0\n" + noDev, true, "/dev/infiniband"},
		{"no verbs library alone", "h:1:2 [0] misc/ibvwrap.cc:63 NCCL WARN Failed to open libibverbs.so[.1]\n" + noDev, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := find(Diagnose(parseString(t, tc.log), ncclenv.Env{}), "net-socket")
			if got := d.ID != ""; got != tc.fires {
				t.Fatalf("net-socket fired = %v, want %v", got, tc.fires)
			}
			if tc.fires && (d.Severity != Warning || !strings.Contains(d.Explanation, tc.has)) {
				t.Errorf("severity %v, explanation %q", d.Severity, d.Explanation)
			}
		})
	}
}

// convSpec matches one printf conversion of a catalog format.
var convSpec = regexp.MustCompile(`%[-+ #0]*[0-9*]*(\.[0-9*]+)?(hh|h|ll|l|z|j|t|L)?[diouxXeEfgGcspn%]`)

// fillFormat prints a format with sample values: 7 for numbers, "x" for
// strings, 0x1 for pointers.
func fillFormat(f string) string {
	return convSpec.ReplaceAllStringFunc(f, func(c string) string {
		switch c[len(c)-1] {
		case '%':
			return "%"
		case 's':
			return "x"
		case 'p':
			return "0x1"
		case 'c':
			return "c"
		case 'e', 'E', 'f', 'g', 'G':
			return "1.5"
		}
		return "7"
	})
}

// TestEveryWarnRead prints every single-line WARN call of the pinned
// release with sample values, at the file and line that prints it, and
// runs the doctor on it alone: each must be read by a rule or by its
// family's generic reading, never only listed as an unexplained warning.
func TestEveryWarnRead(t *testing.T) {
	cat, err := ncclmsg.Default()
	if err != nil {
		t.Fatal(err)
	}
	tried, matched := 0, 0
	for _, e := range cat.Entries {
		if e.Severity != "WARN" || e.Release != ncclmsg.Pinned || e.Format == "-" || strings.ContainsAny(e.Format, "\n\r") {
			continue
		}
		tried++
		line := "h:1:2 [0] " + strings.TrimPrefix(e.File, "src/") + ":" + strconv.Itoa(e.Line) + " NCCL WARN " + fillFormat(e.Format)
		s := parseString(t, line+"\n")
		if s.Messages.Matched != 1 {
			continue // the sample values do not fit this format's matcher
		}
		matched++
		read := false
		for _, d := range Diagnose(s, ncclenv.Env{}) {
			if d.ID == "nccl-warn" || strings.HasPrefix(d.ID, "env-") {
				continue
			}
			for _, l := range d.Evidence {
				read = read || l.Line == 1
			}
		}
		if !read {
			t.Errorf("%s:%d %q: only listed as an unexplained warning", e.File, e.Line, e.Format)
		}
	}
	if tried < 500 || matched < tried*9/10 {
		t.Fatalf("%d WARN formats tried, %d matched their own entry: want most of the 692 calls of v2.30.7-1", tried, matched)
	}
	t.Logf("%d WARN formats tried, %d matched and read", tried, matched)
}

// TestFamilyIBIndex: famIB names the InfiniBand/RoCE verbs family.
func TestFamilyIBIndex(t *testing.T) {
	if msgFamilies[famIB].key != "ib" {
		t.Errorf("msgFamilies[famIB] is %q, want \"ib\"", msgFamilies[famIB].key)
	}
}

// TestSocketGDRLine: NCCL's socket transports print "GPU Direct RDMA
// Disabled for HCA" for every interface (they never have GDR); only an
// RDMA NIC's line means a missing peer-memory module.
func TestSocketGDRLine(t *testing.T) {
	for _, tc := range []struct {
		line string
		want bool
	}{
		{"h:1:2 [0] NCCL INFO NET/Socket : GPU Direct RDMA Disabled for HCA 0 'eth0'", false},
		{"h:1:2 [0] NCCL INFO NET/FastSocket : GPU Direct RDMA Disabled for HCA 1 'eth1'", false},
		{"h:1:2 [0] NCCL INFO NET/IB : GPU Direct RDMA Disabled for HCA 0 'mlx5_0'", true},
	} {
		got := find(Diagnose(parseString(t, tc.line+"\n"), ncclenv.Env{}), "no-gdrdma").ID != ""
		if got != tc.want {
			t.Errorf("%q: no-gdrdma %v, want %v", tc.line, got, tc.want)
		}
	}
}
