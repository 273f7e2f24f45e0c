package doctor

import (
	"sort"
	"strings"
)

// Evidence is a bounded sample of the lines that showed one thing: the first
// few lines and how many there were in total.
type Evidence struct {
	Count int       `json:"count"`
	Lines []LineRef `json:"lines,omitempty"`
}

// Empty reports whether nothing was seen.
func (e Evidence) Empty() bool { return e.Count == 0 }

// VersionSeen is one distinct NCCL version printed in the log.
type VersionSeen struct {
	Version string `json:"version"` // "2.25.1"
	CUDA    string `json:"cuda,omitempty"`
	// Hosts lists the hosts (from line prefixes) that printed it.
	Hosts []string `json:"hosts,omitempty"`
	Line  LineRef  `json:"first"`
}

// Rank is one rank of a communicator as an init line describes it.
type Rank struct {
	Rank    int    `json:"rank"`
	NRanks  int    `json:"nranks"`
	Host    string `json:"host,omitempty"`
	CUDADev int    `json:"cuda_dev"`
	NVMLDev int    `json:"nvml_dev"`
	BusID   string `json:"bus_id,omitempty"`
	CommID  string `json:"comm_id,omitempty"`
	Line    int    `json:"line"`
}

// MaxRingRanks is how many ranks of one ring line the Summary keeps: a
// whole 16-node ring of 8 GPUs each. NCCL itself caps no communicator size
// (init.cc only checks nranks >= 1), so a longer ring is no finding; its
// order beyond the first MaxRingRanks ranks is more than a reader can use
// and would make the report megabytes long.
const MaxRingRanks = 128

// Ring is one "Channel NN/MM : a b c ..." line: the order in which a ring
// visits the ranks. Ranks holds the first MaxRingRanks of them and
// RankCount how many the line names.
type Ring struct {
	Channel   int   `json:"channel"`
	Of        int   `json:"of"`
	Ranks     []int `json:"ranks"`
	RankCount int   `json:"rank_count"`
	Line      int   `json:"line"`
}

// MoreRanks is how many ranks of the ring line Ranks leaves out.
func (r Ring) MoreRanks() int { return max(0, r.RankCount-len(r.Ranks)) }

// TreeLink is one channel of a "Trees" line: the rank's parent and children.
type TreeLink struct {
	Channel int   `json:"channel"`
	Up      int   `json:"up"`
	Down    []int `json:"down"`
	Rank    int   `json:"rank"`
	Line    int   `json:"line"`
}

// Connection is one "Channel NN : a[x] -> b[y] via T" line.
type Connection struct {
	Channel int `json:"channel"`
	From    int `json:"from"`
	To      int `json:"to"`
	// FromDev and ToDev are the bracketed device numbers (the NVML device in
	// 2.18 and later).
	FromDev string `json:"from_dev,omitempty"`
	ToDev   string `json:"to_dev,omitempty"`
	// Transport is the family: "P2P", "SHM", "NET" or "COLLNET".
	Transport string `json:"transport"`
	// Via is the full description after "via", e.g. "NET/IB/0/GDRDMA".
	Via  string `json:"via"`
	Dir  string `json:"dir,omitempty"` // "send", "receive" or empty
	Host string `json:"host,omitempty"`
	Line int    `json:"line"`
	text string // the line, for evidence
}

// TransportCount counts connection lines per transport kind, where the kind
// is the first two parts of the via string ("P2P/CUMEM", "SHM/direct",
// "NET/IB", "NET/Socket", ...).
type TransportCount struct {
	Kind  string  `json:"kind"`
	Count int     `json:"count"`
	First LineRef `json:"first"`
}

// Pair is a distinct (from, to, transport kind) triple, the edges of the
// topology view.
type Pair struct {
	From int    `json:"from"`
	To   int    `json:"to"`
	Kind string `json:"kind"`
}

// ChannelCounts is the "N coll channels, N collnet channels, N nvls
// channels, N p2p channels, N p2p channels per peer" line. Values are -1
// when the line did not mention them.
type ChannelCounts struct {
	Coll       int     `json:"coll"`
	CollNet    int     `json:"collnet"`
	NVLS       int     `json:"nvls"`
	P2P        int     `json:"p2p"`
	P2PPerPeer int     `json:"p2p_per_peer"`
	Line       LineRef `json:"line"`
}

// GraphLine is one searched graph as NCCL_DEBUG_SUBSYS=GRAPH prints it:
// "Pattern 4, crossNic 0, nChannels 16, bw 40.000000/40.000000, type NVL/PIX,
// sameChannels 1".
type GraphLine struct {
	Pattern   int     `json:"pattern"`
	CrossNic  int     `json:"cross_nic"`
	NChannels int     `json:"n_channels"`
	BwIntra   float64 `json:"bw_intra"`
	BwInter   float64 `json:"bw_inter"`
	TypeIntra string  `json:"type_intra"`
	TypeInter string  `json:"type_inter"`
	Line      LineRef `json:"line"`
}

// PathLine is one entry of a GRAPH path dump: from a GPU or NIC to another
// node, with the hop count, bandwidth and path type NCCL computed.
type PathLine struct {
	From string  `json:"from"`
	To   string  `json:"to"`
	Hops int     `json:"hops"`
	Bw   float64 `json:"bw"`
	Type string  `json:"type"`
	Line int     `json:"line"`
	text string  // the line, for evidence
}

// TuningCell is one algorithm × protocol entry of the TUNING table.
type TuningCell struct {
	Func      string  `json:"func"`
	Algorithm string  `json:"algorithm"`
	Protocol  string  `json:"protocol"`
	LatencyUs float64 `json:"latency_us"`
	BwGBps    float64 `json:"bw_gbps"`
}

// Tuning is the first TUNING table of the log (NCCL prints one per
// communicator, on rank 0).
type Tuning struct {
	Algorithms []string          `json:"algorithms"`
	Protocols  []string          `json:"protocols"`
	MaxThreads map[string][]int  `json:"max_threads,omitempty"` // algorithm -> per protocol
	Cells      []TuningCell      `json:"cells"`
	Line       int               `json:"line"`
	Tables     int               `json:"tables"`
	byKey      map[tuningKey]int // index into Cells
}

type tuningKey struct{ f, a, p string }

// AlgoChoice is one "Bytes -> Algo ... proto ..." line.
type AlgoChoice struct {
	Func      string  `json:"func,omitempty"`
	Bytes     int64   `json:"bytes"`
	Algorithm string  `json:"algorithm"`
	Protocol  string  `json:"protocol"`
	TimeUs    float64 `json:"time_us,omitempty"`
	Line      int     `json:"line"`
}

// EnvSetting is one "NAME set by environment to VALUE" echo.
type EnvSetting struct {
	Name  string  `json:"name"`
	Value string  `json:"value"`
	Line  LineRef `json:"line"`
}

// Timeout is one PyTorch "Watchdog caught collective operation timeout".
type Timeout struct {
	Rank      int    `json:"rank"`
	PG        string `json:"pg,omitempty"`
	SeqNum    int64  `json:"seq"`
	OpType    string `json:"op"`
	TimeoutMs int64  `json:"timeout_ms"`
	RanForMs  int64  `json:"ran_for_ms"`
	Line      int    `json:"line"`
	// proc is the launcher's global rank of the line ("[rank13]:"), -1
	// if none: Rank is the rank inside the process group.
	proc int
	// numelIn and numelOut are the work's element counts, -1 when not
	// printed.
	numelIn, numelOut int64
}

// WorkProgress is one rank's progress as its watchdog reported it when a
// collective failed or timed out: the sequence number that failed, the
// last one enqueued and the last one completed (-1 when not printed).
type WorkProgress struct {
	Rank      int    `json:"rank"`
	PG        string `json:"pg,omitempty"`
	Failed    int64  `json:"failed"`
	Enqueued  int64  `json:"enqueued"`
	Completed int64  `json:"completed"`
	Line      int    `json:"line"`
}

// ErrorHandling is the PyTorch error-handling mode as the log or the
// environment states it.
type ErrorHandling struct {
	Mode int     `json:"mode"`
	Line LineRef `json:"line"`
}

// Summary is everything ParseLog found. Every list is bounded; the Evidence
// counts and TotalConnections keep the full totals.
type Summary struct {
	Lines int   `json:"lines"`
	Bytes int64 `json:"bytes"`

	Versions   []VersionSeen `json:"versions,omitempty"`
	CUDADriver string        `json:"cuda_driver,omitempty"`

	// NRanks, NNodes and LocalRanks are the largest values the init lines
	// report (several communicators may appear in one log).
	NRanks     int      `json:"nranks"`
	NNodes     int      `json:"nnodes"`
	LocalRanks int      `json:"local_ranks"`
	Hosts      []string `json:"hosts,omitempty"`
	Ranks      []Rank   `json:"ranks,omitempty"`
	// NRankSizes lists the distinct communicator sizes seen.
	NRankSizes []int `json:"comm_sizes,omitempty"`

	Network    string   `json:"network,omitempty"`
	NetDevices []string `json:"net_devices,omitempty"`
	IBNoDevice Evidence `json:"ib_no_device"`
	NetSocket  Evidence `json:"net_socket"`

	Rings            []Ring           `json:"rings,omitempty"`
	Trees            []TreeLink       `json:"trees,omitempty"`
	Connections      []Connection     `json:"connections,omitempty"`
	TotalConnections int              `json:"total_connections"`
	Transports       []TransportCount `json:"transports,omitempty"`
	Pairs            []Pair           `json:"pairs,omitempty"`

	Channels []ChannelCounts `json:"channels,omitempty"`

	NVLSSupported   Evidence `json:"nvls_supported"`
	NVLSUnsupported Evidence `json:"nvls_unsupported"`
	NVLSComms       Evidence `json:"nvls_comms"`
	CollNet         Evidence `json:"collnet"`
	CollNetDisabled Evidence `json:"collnet_disabled"`

	Graphs []GraphLine `json:"graphs,omitempty"`
	Paths  []PathLine  `json:"paths,omitempty"`

	Tuning      *Tuning      `json:"tuning,omitempty"`
	AlgoChoices []AlgoChoice `json:"algo_choices,omitempty"`

	EnvSettings []EnvSetting `json:"env,omitempty"`

	// NCCLTests is the nccl-tests benchmark the log holds, nil if none.
	NCCLTests *NCCLTestsRun `json:"nccl_tests,omitempty"`

	// LastNCCL is the last NCCL-formatted line of the log.
	LastNCCL LineRef `json:"last_nccl_line"`

	// Messages ties the NCCL lines to NCCL's message catalog.
	Messages MessageStats `json:"messages"`

	Warnings        Evidence `json:"warnings"` // every NCCL WARN line
	P2PDisabled     Evidence `json:"p2p_disabled"`
	VersionMismatch Evidence `json:"version_mismatch"`
	PeerLost        Evidence `json:"peer_lost"`
	ShmFailure      Evidence `json:"shm_failure"`
	NCCLErrors      Evidence `json:"nccl_errors"` // PyTorch "NCCL error" / DistBackendError lines

	Timeouts         []Timeout      `json:"timeouts,omitempty"`
	Progress         []WorkProgress `json:"work_progress,omitempty"`
	TimeoutLines     Evidence       `json:"timeout_lines"`
	WatchdogEx       Evidence       `json:"watchdog_exceptions"`
	TearDown         Evidence       `json:"teardown"`
	Heartbeat        Evidence       `json:"heartbeat"`
	WatchdogStuck    Evidence       `json:"watchdog_stuck"`
	FlightRecorder   Evidence       `json:"flight_recorder_off"`
	DeprecatedTorch  Evidence       `json:"deprecated_torch_env"`
	ErrorHandling    *ErrorHandling `json:"error_handling,omitempty"`
	BlockingWait     *ErrorHandling `json:"blocking_wait,omitempty"`
	MonitoringOn     *ErrorHandling `json:"monitoring,omitempty"`
	ConnectedRings   bool           `json:"connected_rings"`
	ConnectedTrees   bool           `json:"connected_trees"`
	InitComplete     int            `json:"init_complete"`
	Notes            []string       `json:"parser_notes,omitempty"`
	BinaryLines      int            `json:"binary_lines"`
	TruncatedLines   int            `json:"truncated_lines"`
	InvalidUTF8Lines int            `json:"invalid_utf8_lines"`
	// ControlLines counts lines from which controls.Strip removed terminal
	// control sequences or control characters.
	ControlLines int `json:"control_lines,omitempty"`

	// exiting holds lines that say the program was ending: PyTorch's
	// warning that a process group was still alive when the interpreter
	// shut down ("destroy_process_group() was not called before program
	// exit", ProcessGroupNCCL's shutdown path), GoogleTest's "Global test
	// environment tear-down" banner and Python's atexit messages.
	exiting Evidence
	// gdrNoModule holds "GPU Direct RDMA Disabled for HCA N 'dev'" lines:
	// the NIC cannot reach GPU memory at all (no peer-memory module or
	// DMA-BUF), unlike the per-GPU distance message.
	gdrNoModule Evidence
	// sockIfs are the interfaces NCCL names for bootstrap and socket
	// traffic (scanSockIfs).
	sockIfs []sockIf
	// peerLostText are lost-peer messages outside NCCL WARN lines
	// (scanPeerLostText).
	peerLostText Evidence
	// newGPU holds lines that name a Blackwell GPU (rules_torch.go), for
	// the causes of an NCCL error class.
	newGPU Evidence
	// testFailure holds nccl-tests' own "Test NCCL failure" / "Test CUDA
	// failure" lines: the run failed, it did not hang.
	testFailure Evidence
	// mismatch is the reading of the first line of ProcessGroupWrapper's
	// "Detected mismatch between collectives on ranks" report, taken from
	// the whole line (evidence lines are cut short).
	mismatch string
	// ruleHits holds the evidence of each line rule (lineRules) by ID.
	ruleHits map[string]*Evidence
	// catalogHits are the WARN and error-return lines the catalog tied to
	// a call, for the generic readings (catalogfamily.go).
	catalogHits []catalogHit
	// netCues holds the lines that say why NCCL fell back to sockets, by
	// netCue key.
	netCues map[string]*Evidence
	// ruleLast is the last line added to each rule's evidence, so a line
	// that matches a rule both by text and by catalog entry counts once.
	ruleLast map[string]int
	// facts holds the values of watched catalog fields (watchedFields):
	// label -> value -> the hosts (or "" when the line names none) that
	// printed it.
	facts map[string]map[string]map[string]bool
	// gidRows are the rows of pasted GID tables (show_gids, ibv_devinfo
	// -v); of the first device's (gidTableDev) gidLow is the lowest index,
	// gidLinkLocal the fe80:: indices (", 0, 1"), gidPick the first IPv4
	// RoCE v2 index with its address ("7 (10.0.0.1)"). gidLinkLocalQP holds
	// NCCL's queue-pair lines on a link-local GID, gidLinkLocalIdx the
	// first such index (gid.go).
	gidRows                            Evidence
	gidTableDev, gidLinkLocal, gidPick string
	gidLow                             int
	gidLinkLocalQP                     Evidence
	gidLinkLocalIdx                    string
}

// maxFactValues bounds the distinct values kept per watched field.
const maxFactValues = 16

// factValues returns the distinct values the log printed for a watched
// catalog field, sorted, and for each the hosts that printed it.
func (s *Summary) factValues(label string) ([]string, map[string][]string) {
	m := s.facts[label]
	vals := make([]string, 0, len(m))
	hosts := map[string][]string{}
	for v, hs := range m {
		vals = append(vals, v)
		for h := range hs {
			if h != "" {
				hosts[v] = append(hosts[v], h)
			}
		}
		sort.Strings(hosts[v])
	}
	sort.Strings(vals)
	return vals, hosts
}

// Version returns the NCCL version most lines printed ("" if none).
func (s *Summary) Version() string {
	if len(s.Versions) == 0 {
		return ""
	}
	best := s.Versions[0]
	for _, v := range s.Versions[1:] {
		if len(v.Hosts) > len(best.Hosts) {
			best = v
		}
	}
	return best.Version
}

// ChannelCount returns the number of collective channels: the largest
// "coll channels" value, else the ring count of "Channel NN/MM" lines, else
// one more than the highest channel index of a connection line; 0 if the log
// shows none.
func (s *Summary) ChannelCount() int {
	n := 0
	for _, c := range s.Channels {
		n = max(n, c.Coll)
	}
	if n > 0 {
		return n
	}
	for _, r := range s.Rings {
		n = max(n, r.Of, r.Channel+1)
	}
	if n > 0 {
		return n
	}
	for _, c := range s.Connections {
		n = max(n, c.Channel+1)
	}
	return n
}

// TransportKinds returns the transport kinds seen, in first-seen order.
func (s *Summary) TransportKinds() []string {
	out := make([]string, 0, len(s.Transports))
	for _, t := range s.Transports {
		out = append(out, t.Kind)
	}
	return out
}

// HasTransport reports whether any connection used the family ("P2P",
// "SHM", "NET", "COLLNET") or kind ("NET/Socket").
func (s *Summary) HasTransport(name string) bool {
	for _, t := range s.Transports {
		if t.Kind == name || family(t.Kind) == name {
			return true
		}
	}
	return false
}

// HasNetDevices reports whether NCCL listed devices of a network
// transport ("IB" or "Socket") in a "NET/... : Using" line.
func (s *Summary) HasNetDevices(kind string) bool {
	for _, d := range s.NetDevices {
		if strings.HasPrefix(d, kind+" ") {
			return true
		}
	}
	return false
}

func family(kind string) string {
	for i := 0; i < len(kind); i++ {
		if kind[i] == '/' {
			return kind[:i]
		}
	}
	return kind
}

// Env returns the last value the log echoed for name.
func (s *Summary) Env(name string) (EnvSetting, bool) {
	for i := len(s.EnvSettings) - 1; i >= 0; i-- {
		if s.EnvSettings[i].Name == name {
			return s.EnvSettings[i], true
		}
	}
	return EnvSetting{}, false
}
