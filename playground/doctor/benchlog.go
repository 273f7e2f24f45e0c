package doctor

import (
	"slices"
	"strconv"
	"strings"

	"github.com/distributed-nav/distributed-nav/playground/ascii"
)

// NCCLTestsRun is what a log shows of an nccl-tests benchmark (all_reduce_perf
// and the others, or the older NCCL 1 test programs): the devices of its
// "Rank N ... device D [bus] NAME" lines, whether the column header was
// printed, how many result rows followed, and the best bus bandwidth.
type NCCLTestsRun struct {
	Devices []string `json:"devices,omitempty"`
	// HeaderLine is the line of the column header ("... algbw busbw ..."),
	// 0 if none was printed.
	HeaderLine int `json:"header_line"`
	// MaxBytes is the largest size the run was asked for ("maxBytes N" of
	// its first line), 0 if not printed.
	MaxBytes uint64 `json:"max_bytes,omitempty"`
	// Rows counts the result rows; LastBytes is the size of the last one.
	Rows      int    `json:"rows"`
	LastBytes uint64 `json:"last_bytes,omitempty"`
	LastRow   int    `json:"last_row_line,omitempty"`
	// WrongRows counts rows whose #wrong column is not 0 (wrong results).
	WrongRows int `json:"wrong_rows,omitempty"`
	// Finished is true when the "# Avg bus bandwidth" line closed the run.
	Finished bool `json:"finished"`
	// Collective is the benchmark's collective when the log names it
	// ("allreduce"), NRanks the number of Rank lines, PeakBusBwGBps the
	// largest busbw of any row (either half) and PeakBytes that row's size.
	Collective    string  `json:"collective,omitempty"`
	NRanks        int     `json:"nranks,omitempty"`
	PeakBusBwGBps float64 `json:"peak_busbw_GBps,omitempty"`
	PeakBytes     uint64  `json:"peak_bytes,omitempty"`
	// Hosts counts the distinct hosts of the Rank lines ("... on HOST
	// device ..."), 0 if they name none. Nodes and GPUsPerNode are what the
	// log shows of the machine (from the Rank lines, else from the NCCL
	// lines; 0: not shown).
	Hosts       int `json:"hosts,omitempty"`
	Nodes       int `json:"nodes,omitempty"`
	GPUsPerNode int `json:"gpus_per_node,omitempty"`
	// Coll is the run's collective when the estimator models it (one of
	// EstimatorColls); EstimatorURL is the site-relative estimator page
	// with the run's collective, peak size and node count.
	Coll         string `json:"coll,omitempty"`
	EstimatorURL string `json:"estimator_url,omitempty"`
	// System is the built-in system closest to the machine, with NCCL's
	// expectation there; filled by callers that carry the presets and the
	// estimator (ncclsim doctor, service.DoctorExpectation), nil on the
	// page, whose WebAssembly carries neither.
	System *BenchSystem `json:"system,omitempty"`
}

// BenchSystem is the preset closest to an nccl-tests run's machine and
// what NCCL's model expects of the run there.
type BenchSystem struct {
	// Preset is the preset's name, Title its display name; Exact is false
	// when only the GPU model matches (not the GPU count or the kind of
	// system).
	Preset string `json:"preset"`
	Title  string `json:"title"`
	Exact  bool   `json:"exact"`
	// EstimatorURL is the estimator page with this preset and the run's
	// settings; CompareCommand the ncclsim command for the whole table.
	EstimatorURL   string `json:"estimator_url"`
	CompareCommand string `json:"compare_command"`
	// Expected is NCCL's model and the calibrated estimate at the run's
	// peak size, nil when the run's collective or size is not known.
	Expected *BusBwExpectation `json:"expected,omitempty"`
}

// BusBwExpectation is what the model expects of the run's peak size on
// the suggested system.
type BusBwExpectation struct {
	ModelBusBwGBps      float64  `json:"model_busbw_GBps"`
	CalibratedBusBwGBps float64  `json:"calibrated_busbw_GBps"`
	LowGBps             float64  `json:"busbw_low_GBps"`
	HighGBps            *float64 `json:"busbw_high_GBps"`
	Algo                string   `json:"algo"`
	Proto               string   `json:"proto"`
	// MeasuredGBps is the run's peak busbw, Ratio MeasuredGBps over the
	// calibrated estimate.
	MeasuredGBps float64 `json:"measured_busbw_GBps"`
	Ratio        float64 `json:"ratio"`
}

// benchState follows the nccl-tests output of a log.
type benchState struct {
	on    bool
	prog  string          // the last "*_perf" program a command line named
	hosts map[string]bool // the hosts of the Rank lines
}

// benchLine looks at every line for nccl-tests output. The first marker
// ("# nThread", "Using devices", a column header) starts the run.
func (p *parser) benchLine(n int, b []byte) {
	t := strings.TrimSpace(strings.TrimLeft(dropLauncherTag(string(b)), "#> "))
	st := &p.bench
	if !st.on {
		for _, w := range strings.Fields(t) {
			if strings.HasSuffix(w, "_perf") || strings.HasSuffix(w, "_perf_mpi") {
				st.prog = w[strings.LastIndexByte(w, '/')+1:]
			}
		}
		if !(strings.HasPrefix(t, "nThread ") || strings.HasPrefix(t, "Using devices") || isBenchHeader(t)) {
			return
		}
		st.on = true
		p.s.NCCLTests = &NCCLTestsRun{}
	}
	r := p.s.NCCLTests
	switch {
	case strings.HasPrefix(t, "nThread "):
		if i := strings.Index(t, "maxBytes "); i >= 0 {
			if v, ok := leadingUint(t[i+len("maxBytes "):]); ok {
				r.MaxBytes = v
			}
		}
	case strings.HasPrefix(t, "Rank ") && strings.Contains(t, " device "):
		if name := benchDevice(t); name != "" && len(r.Devices) < p.opts.MaxItems {
			r.Devices = append(r.Devices, name)
		}
		if h := benchHost(t); h != "" && len(st.hosts) < p.opts.MaxItems {
			if st.hosts == nil {
				st.hosts = map[string]bool{}
			}
			st.hosts[h] = true
		}
	case isBenchHeader(t):
		if r.HeaderLine == 0 {
			r.HeaderLine = n
		}
	case strings.HasPrefix(t, "Avg bus bandwidth"):
		r.Finished = true
	case strings.HasPrefix(t, "Collective test starting:"):
		r.Collective = benchCollective(strings.TrimSpace(t[len("Collective test starting:"):]))
	case r.HeaderLine > 0:
		if f := strings.Fields(t); len(f) >= 8 && ascii.Digits(f[0]) && ascii.Digits(f[1]) {
			r.Rows++
			r.LastRow = n
			r.LastBytes, _ = leadingUint(f[0])
			if benchRowWrong(f) {
				r.WrongRows++
			}
			benchPeak(r, f)
		}
	}
}

// dropLauncherTag removes the tag a launcher puts before each line it
// relays: Open MPI's "[1,0]<stdout>:", torchrun's "[rank3]:", the "[0] "
// of mpirun --tag-output variants, a bracketed time stamp, Ray's "(Worker
// pid=N, ...)", srun -l's "N: " or pdsh's "host: ", so that tables printed
// through them are read like bare ones.
func dropLauncherTag(s string) string {
	t := strings.TrimLeft(s, " ")
	for strings.HasPrefix(t, "[") {
		end := strings.IndexByte(t, ']')
		if end < 0 || end > 24 {
			break
		}
		rest := t[end+1:]
		if strings.HasPrefix(rest, "<stdout>:") || strings.HasPrefix(rest, "<stderr>:") {
			rest = rest[len("<stdout>:"):]
		} else if strings.HasPrefix(rest, ":") {
			rest = rest[1:]
		} else if !strings.HasPrefix(rest, " ") || !(ascii.Digits(t[1:end]) || isTimestamp(t[1:end])) {
			break
		}
		t = strings.TrimLeft(rest, " ")
	}
	if strings.HasPrefix(t, "(") {
		// Ray's "(RayWorkerWrapper pid=38530, ip=10.244.1.95) ".
		if end := strings.IndexByte(t, ')'); end > 0 && end < 96 && strings.Contains(t[:end], "pid=") {
			t = strings.TrimLeft(t[end+1:], " ")
		}
	}
	if f, rest, ok := strings.Cut(t, ": "); ok && f != "" && len(f) <= 64 && !strings.ContainsAny(f, " \t[(#") {
		// srun -l's "0: " and pdsh's (and DeepSpeed's launcher's) "host: ".
		t = strings.TrimLeft(rest, " ")
	}
	if t == strings.TrimLeft(s, " ") {
		return s
	}
	return t
}

// isTimestamp reports whether a bracketed tag is a date or time stamp
// ("2025-09-18 23:23:41", "23:23:41.123", "2025-09-18T23:23:41Z"), as log
// collectors and `ts` put before each line.
func isTimestamp(s string) bool {
	if !strings.Contains(s, ":") || s == "" || s[0] < '0' || s[0] > '9' {
		return false
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9', c == '-', c == ':', c == '.', c == ' ', c == 'T', c == 'Z', c == '+', c == '/', c == ',':
		default:
			return false
		}
	}
	return true
}

// isBenchHeader matches the column header of the results table.
func isBenchHeader(t string) bool {
	return strings.Contains(t, "algbw") && strings.Contains(t, "busbw") && !strings.Contains(t, "NCCL ")
}

// benchDevice reads the device name after "device D [bus] " in a Rank
// line of nccl-tests or of the NCCL 1 tests ("Rank 0 uses device 0 [0x02]
// Tesla P100").
func benchDevice(t string) string {
	i := strings.Index(t, " device ")
	rest := t[i+len(" device "):]
	j := strings.Index(rest, "] ")
	if j < 0 {
		return ""
	}
	return clip(strings.TrimSpace(rest[j+2:]), 80)
}

// benchHost reads HOST of "Rank 0 Group 0 Pid 123 on HOST device 0 ...".
func benchHost(t string) string {
	i := strings.Index(t, " on ")
	j := strings.Index(t, " device ")
	if i < 0 || j < i {
		return ""
	}
	return clip(strings.TrimSpace(t[i+len(" on "):j]), 80)
}

// benchPeak reads the busbw of both halves of a row: the last eight
// fields are time, algbw, busbw and the error column, out of place then in
// place (nccl-tests 2.x and the NCCL 1 tests alike).
func benchPeak(r *NCCLTestsRun, f []string) {
	size, _ := leadingUint(f[0])
	for _, i := range []int{len(f) - 6, len(f) - 2} {
		if v, err := strconv.ParseFloat(f[i], 64); err == nil && v > r.PeakBusBwGBps {
			r.PeakBusBwGBps, r.PeakBytes = v, size
		}
	}
}

// benchCollective turns "all_reduce_perf" into "allreduce".
func benchCollective(prog string) string {
	prog = strings.TrimSuffix(strings.TrimSuffix(strings.Fields(prog + " ")[0], "_mpi"), "_perf")
	return strings.ReplaceAll(prog, "_", "")
}

// benchRowWrong reports whether a result row counts wrong elements: an
// integer #wrong column (the last field of each half) above 0. Tables with
// a floating error column (older nccl-tests) are left alone.
func benchRowWrong(f []string) bool {
	last := f[len(f)-1]
	if !ascii.Digits(last) {
		return false
	}
	v, _ := strconv.Atoi(last)
	return v > 0
}

// leadingUint parses the decimal number at the start of s.
func leadingUint(s string) (uint64, bool) {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	v, err := strconv.ParseUint(s[:i], 10, 64)
	return v, err == nil
}

// finishBench fills in what the table says as a whole: the collective of
// "# Collective test starting: NAME" (or the program name of the command
// line) and, when the Rank lines gave devices, the rank count. Package
// nccltests reads tables in full for `ncclsim compare`; the doctor keeps to
// the peak (read row by row in benchLine) because linking that parser
// into the playground costs about 30 KB of gzipped wasm.
func (p *parser) finishBench() {
	r := p.s.NCCLTests
	if r == nil {
		return
	}
	if r.NRanks == 0 {
		r.NRanks = len(r.Devices)
	}
	if r.Collective == "" && p.bench.prog != "" {
		r.Collective = benchCollective(p.bench.prog)
	}
	r.Hosts = len(p.bench.hosts)
	r.Nodes = r.Hosts
	if r.Nodes == 0 {
		r.Nodes = max(p.s.NNodes, len(p.s.Hosts))
	}
	if r.Nodes > 0 && r.NRanks > 0 && r.NRanks%r.Nodes == 0 {
		r.GPUsPerNode = r.NRanks / r.Nodes
	}
	if slices.Contains(EstimatorColls, r.Collective) {
		r.Coll = r.Collective
	}
	if r.Rows > 0 {
		r.EstimatorURL = r.EstimatorLink("")
	}
}

// EstimatorColls are the collectives the estimator models, as nccl-tests
// programs name them (all_reduce_perf: "allreduce"); service's tests keep
// the list equal to the estimator's own.
var EstimatorColls = []string{"allreduce", "allgather", "reducescatter", "broadcast", "reduce"}

// EstimatorLink is the estimator page with the run's collective, peak size
// and node count, and preset when not "". Preset names are [a-z0-9-],
// collectives letters and sizes digits: nothing needs escaping.
func (r *NCCLTestsRun) EstimatorLink(preset string) string {
	var q []string
	if preset != "" {
		q = append(q, "preset="+preset)
	}
	if r.Nodes > 1 {
		q = append(q, "nodes="+strconv.Itoa(r.Nodes))
	}
	if r.Coll != "" {
		q = append(q, "coll="+r.Coll)
	}
	if r.PeakBytes > 0 {
		q = append(q, "bytes="+strconv.FormatUint(r.PeakBytes, 10))
	}
	if len(q) == 0 {
		return estimatorPage
	}
	return estimatorPage + "?" + strings.Join(q, "&")
}
