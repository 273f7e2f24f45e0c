package doctor

import (
	"errors"
	"math"
	"strconv"
	"strings"

	"github.com/distributed-nav/distributed-nav/playground/ascii"
	"github.com/distributed-nav/distributed-nav/playground/tune"
)

// ncclMessage dispatches one NCCL log message (the text after "NCCL INFO ",
// "NCCL WARN ", ...). raw is the whole line, kept as evidence.
func (p *parser) ncclMessage(n int, o origin, lvl level, msg, raw string) {
	if lvl == levelWarn {
		p.warn(n, msg, raw)
	}
	t := strings.TrimSpace(msg)
	switch {
	case strings.HasPrefix(t, "NCCL version "):
		p.version(n, o, t, raw)
	case strings.HasPrefix(t, "cudaDriverVersion "):
		if p.s.CUDADriver == "" {
			p.s.CUDADriver = strings.TrimSpace(t[len("cudaDriverVersion "):])
		}
	case strings.HasPrefix(t, "Channel "):
		p.channel(n, o, t, raw)
	case strings.Contains(t, "|") && !strings.HasPrefix(t, "threadThresholds"):
		p.tuningRow(n, t)
	case strings.HasPrefix(t, "CollNet "):
		p.add(&p.s.CollNet, n, raw)
		p.collnetConn(n, o, t, raw)
	case strings.HasPrefix(t, "Trees"):
		p.trees(n, t)
	case strings.Contains(t, " coll channels"):
		p.channelCounts(n, t, raw)
	case strings.HasPrefix(t, "Using network "):
		name := strings.TrimSpace(t[len("Using network "):])
		if p.s.Network == "" {
			p.s.Network = name
		} else if p.s.Network != name {
			p.note("the log names more than one network plugin: " + clip(p.s.Network, 40) + " and " + clip(name, 40))
		}
		if strings.EqualFold(name, "Socket") {
			p.add(&p.s.NetSocket, n, raw)
		}
	case strings.HasPrefix(t, "NET/IB : No device found") || strings.HasPrefix(t, "NET/IB: No device found") ||
		strings.HasPrefix(t, "Failed to open libibverbs"):
		p.add(&p.s.IBNoDevice, n, raw)
	case strings.Contains(t, "GPU Direct RDMA Disabled for HCA") && !strings.Contains(t, "Socket :"):
		// A socket transport ("NET/Socket :", "NET/FastSocket :") never
		// has GPUDirect RDMA; only an RDMA NIC's line says a module is missing.
		p.add(&p.s.gdrNoModule, n, raw)
	case strings.HasPrefix(t, "NET/IB : Using") || strings.HasPrefix(t, "NET/IB: Using"):
		p.netDevices("IB", t[strings.Index(t, "Using")+5:])
	case strings.HasPrefix(t, "NET/Socket : Using") || strings.HasPrefix(t, "NET/Socket: Using"):
		p.netDevices("Socket", t[strings.Index(t, "Using")+5:])
	case strings.HasPrefix(t, "NVLS multicast support is not available"):
		p.add(&p.s.NVLSUnsupported, n, raw)
	case strings.HasPrefix(t, "NVLS multicast support is available"):
		p.add(&p.s.NVLSSupported, n, raw)
	case strings.HasPrefix(t, "NVLS comm "):
		p.add(&p.s.NVLSComms, n, raw)
	case strings.Contains(t, "CollNet"):
		if strings.Contains(t, "disabling CollNet") {
			p.add(&p.s.CollNetDisabled, n, raw)
		} else {
			p.add(&p.s.CollNet, n, raw)
		}
	case strings.HasPrefix(t, "Pattern "):
		p.pattern(n, t, raw)
	case strings.Contains(t, " set by environment to "):
		p.envEcho(n, t, raw)
	case strings.Contains(t, "Bytes -> Algo "):
		p.algoChoice(n, t)
	case t == "Connected all rings" || strings.HasPrefix(t, "Connected all rings,"):
		p.s.ConnectedRings = true
	case t == "Connected all trees":
		p.s.ConnectedTrees = true
	case strings.Contains(t, "P2P is disabled between") || strings.HasPrefix(t, "Could not enable P2P between"):
		if lvl != levelWarn || !strings.Contains(t, "P2P is disabled between") {
			// classifyWarn has filed the WARN.
			p.add(&p.s.P2PDisabled, n, raw)
		}
	case strings.Contains(t, "nRanks ") || strings.Contains(t, "nranks "):
		p.comm(n, o, t)
	case strings.Contains(t, " :") && strings.Contains(t, "/") && strings.Contains(t, "("):
		p.paths(n, t, raw)
	}
}

// warn files an NCCL WARN line and classifies it.
func (p *parser) warn(n int, msg, raw string) {
	p.add(&p.s.Warnings, n, raw)
	p.classifyWarn(n, msg, raw)
}

// classifyWarn files the message of an NCCL WARN, printed or quoted on line
// n, under the failures it shows.
func (p *parser) classifyWarn(n int, msg, raw string) {
	switch {
	case strings.Contains(msg, "Mismatched NCCL version"):
		p.add(&p.s.VersionMismatch, n, raw)
		p.mismatchCodes(n, msg, raw)
	case isPeerLost(msg):
		p.add(&p.s.PeerLost, n, raw)
	case strings.Contains(msg, "P2P is disabled between"):
		p.add(&p.s.P2PDisabled, n, raw)
	}
}

// isPeerLost matches the messages NCCL prints when the other end of a
// connection went away (a crashed or killed rank, a network failure).
func isPeerLost(msg string) bool {
	for _, k := range []string{"Connection closed by remote peer", "Socket recv failed",
		"remote process exited", "Connection reset by peer", "Net : Connection closed", "Call to recv from"} {
		if strings.Contains(msg, k) {
			return true
		}
	}
	return false
}

// isShmFailure matches failures to create or grow the /dev/shm files of the
// SHM transport and host buffers. The INFO lines that merely name a
// /dev/shm file ("Allocated ... bytes of shared memory in /dev/shm/...")
// are not failures, and a segment a rank could not attach to is the
// shm-attach-failed rule's.
func isShmFailure(msg string) bool {
	if strings.Contains(msg, "attaching to shared memory segment") {
		return false
	}
	return containsAny(msg, shmFailures) || strings.Contains(msg, "No space left on device") && strings.Contains(msg, "shm")
}

// shmFailures are the parts of the failure messages of NCCL's /dev/shm
// code in every release the catalog holds ("Error while %s shared memory
// segment %s (size %ld)" with "creating"; "Error: failed to extend %s to %ld
// bytes"; "Error: failed to create shared memory file %s"; up to 2.11 "Call to
// posix_fallocate failed : %s" and "Call to shm_open failed : %s"; "Could
// not map %s") and PyTorch's
// DataLoader messages (torch/csrc/DataLoader.cpp: "This might be caused by
// insufficient shared memory (shm)" and "It is possible that dataloader's
// workers are out of shared memory").
var shmFailures = []string{"creating shared memory segment", "Error: failed to extend /dev/shm", "failed to create shared memory file",
	"Call to posix_fallocate failed", "Call to shm_open failed", "Could not map /dev/shm", "insufficient shared memory (shm)",
	"workers are out of shared memory"}

// version records "NCCL version 2.25.1+cuda12.2" (and the "compiled with
// CUDA" spelling of the RAS client).
func (p *parser) version(n int, o origin, t, raw string) {
	f := strings.Fields(t)
	if len(f) < 3 {
		return
	}
	v, cuda, _ := strings.Cut(f[2], "+")
	cuda = strings.TrimPrefix(cuda, "cuda")
	if len(f) >= 6 && f[3] == "compiled" && strings.EqualFold(f[5], "CUDA") && len(f) >= 7 {
		cuda = f[6]
	}
	p.addVersion(n, o.Host, v, cuda, raw)
}

func (p *parser) addVersion(n int, host, v, cuda, raw string) {
	if !validVersion(v) {
		return
	}
	i, ok := p.versions[v]
	if !ok {
		if len(p.s.Versions) >= p.opts.MaxItems {
			return
		}
		i = len(p.s.Versions)
		p.versions[v] = i
		p.versHosts[v] = map[string]bool{}
		p.s.Versions = append(p.s.Versions, VersionSeen{Version: v, CUDA: cuda, Line: p.ref(n, raw)})
	}
	if host != "" && !p.versHosts[v][host] && len(p.s.Versions[i].Hosts) < p.opts.MaxItems {
		p.versHosts[v][host] = true
		p.s.Versions[i].Hosts = append(p.s.Versions[i].Hosts, host)
	}
}

// validVersion accepts "2.25.1" and "2.18.3a0"-like spellings: three dotted
// numbers, the last possibly followed by letters or digits.
func validVersion(v string) bool {
	parts := strings.Split(v, ".")
	if len(parts) != 3 || len(v) > 24 {
		return false
	}
	for i, q := range parts {
		if _, ok := leadingInt(q); !ok {
			return false
		}
		if i < 2 && !ascii.Digits(q) {
			return false
		}
	}
	return true
}

// mismatchCodes reads the version codes of "Mismatched NCCL version detected
// : rank 8 version 22105 rank 0 version 23007" as versions seen.
func (p *parser) mismatchCodes(n int, msg, raw string) {
	f := strings.Fields(msg)
	for i := 0; i+1 < len(f); i++ {
		if f[i] != "version" {
			continue
		}
		code, err := strconv.Atoi(f[i+1])
		if err != nil || code <= 0 {
			continue
		}
		p.addVersion(n, "", decodeVersionCode(code), "", raw)
	}
}

// decodeVersionCode turns NCCL_VERSION_CODE into "major.minor.patch": since
// 2.9 the code is major*10000 + minor*100 + patch, before that
// major*1000 + minor*100 + patch (NCCL_VERSION in nccl.h).
func decodeVersionCode(code int) string {
	if code >= 20900 {
		return strconv.Itoa(code/10000) + "." + strconv.Itoa(code/100%100) + "." + strconv.Itoa(code%100)
	}
	return strconv.Itoa(code/1000) + "." + strconv.Itoa(code/100%10) + "." + strconv.Itoa(code%100)
}

// channel reads "Channel NN/MM : a b c" (a ring) or "Channel NN/C : a[x] ->
// b[y] [send] via T" / "Channel NN : a[x] -> b[y] via T" (a connection).
func (p *parser) channel(n int, o origin, t, raw string) {
	rest := t[len("Channel "):]
	head, body, ok := strings.Cut(rest, ":")
	if !ok {
		return
	}
	head = strings.TrimSpace(head)
	chStr, ofStr, hasOf := strings.Cut(head, "/")
	ch, err := strconv.Atoi(chStr)
	if err != nil || ch < 0 {
		return
	}
	if strings.Contains(body, "->") && strings.Contains(body, " via ") {
		p.connection(n, o, ch, body, raw)
		return
	}
	fields := strings.Fields(body)
	if len(fields) == 0 {
		return
	}
	ranks := make([]int, 0, min(len(fields), MaxRingRanks))
	for _, f := range fields {
		r, err := strconv.Atoi(f)
		if err != nil || r < 0 {
			return
		}
		if len(ranks) < MaxRingRanks {
			ranks = append(ranks, r)
		}
	}
	of := 0
	if hasOf {
		// Ring lines print the ring count ("%02d/%02d", at least 1);
		// "NN/0" is the connection index of a cut connection line.
		of, _ = strconv.Atoi(ofStr)
		if of <= 0 {
			return
		}
	}
	key := [2]int{ch, of}
	if p.ringKeys[key] || len(p.s.Rings) >= p.opts.MaxItems {
		return
	}
	p.ringKeys[key] = true
	p.s.Rings = append(p.s.Rings, Ring{Channel: ch, Of: of, Ranks: ranks, RankCount: len(fields), Line: n})
}

// endpoint parses "12[3]" (rank and device) or "12".
func endpoint(s string) (int, string, bool) {
	s = strings.TrimSpace(s)
	r, dev, _ := strings.Cut(s, "[")
	rank, err := strconv.Atoi(r)
	if err != nil || rank < 0 {
		return 0, "", false
	}
	return rank, strings.TrimSuffix(dev, "]"), true
}

func (p *parser) connection(n int, o origin, ch int, body, raw string) {
	left, right, _ := strings.Cut(body, "->")
	from, fromDev, ok := endpoint(left)
	if !ok {
		return
	}
	right, via, ok := strings.Cut(right, " via ")
	if !ok {
		return
	}
	dir := ""
	switch {
	case strings.Contains(right, "[send]"):
		dir = "send"
		right = strings.Replace(right, "[send]", "", 1)
	case strings.Contains(right, "[receive]"):
		dir = "receive"
		right = strings.Replace(right, "[receive]", "", 1)
	}
	to, toDev, ok := endpoint(right)
	if !ok {
		return
	}
	p.addConnection(Connection{Channel: ch, From: from, To: to, FromDev: fromDev, ToDev: toDev,
		Via: strings.TrimSpace(via), Dir: dir, Host: o.Host, Line: n}, raw)
}

// collnetConn reads "CollNet NN/C : R [send] via COLLNET/SHARP/0".
func (p *parser) collnetConn(n int, o origin, t, raw string) {
	_, body, ok := strings.Cut(t, ":")
	if !ok {
		return
	}
	head, via, ok := strings.Cut(body, " via ")
	if !ok {
		return
	}
	chStr, _, _ := strings.Cut(strings.TrimSpace(t[len("CollNet "):]), "/")
	ch, err := strconv.Atoi(strings.TrimSpace(chStr))
	if err != nil {
		return
	}
	dir := ""
	if strings.Contains(head, "[send]") {
		dir = "send"
	} else if strings.Contains(head, "[receive]") {
		dir = "receive"
	}
	head = strings.NewReplacer("[send]", "", "[receive]", "").Replace(head)
	r, _, ok := endpoint(head)
	if !ok {
		return
	}
	p.addConnection(Connection{Channel: ch, From: r, To: -1, Via: strings.TrimSpace(via), Dir: dir, Host: o.Host, Line: n}, raw)
}

// kindOf returns the first two '/'-separated parts of a via string, which
// name the transport and its mechanism ("P2P/CUMEM", "NET/IB").
func kindOf(via string) string {
	i := strings.IndexByte(via, '/')
	if i < 0 {
		return via
	}
	j := strings.IndexByte(via[i+1:], '/')
	if j < 0 {
		return via
	}
	return via[:i+1+j]
}

func (p *parser) addConnection(c Connection, raw string) {
	kind := kindOf(c.Via)
	c.Transport = family(kind)
	p.s.TotalConnections++
	if i, ok := p.transIdx[kind]; ok {
		p.s.Transports[i].Count++
	} else if len(p.s.Transports) < p.opts.MaxItems {
		p.transIdx[kind] = len(p.s.Transports)
		p.s.Transports = append(p.s.Transports, TransportCount{Kind: kind, Count: 1, First: p.ref(c.Line, raw)})
	}
	pair := Pair{From: c.From, To: c.To, Kind: kind}
	if !p.pairKeys[pair] && len(p.s.Pairs) < p.opts.MaxItems {
		p.pairKeys[pair] = true
		p.s.Pairs = append(p.s.Pairs, pair)
	}
	if len(p.s.Connections) < p.opts.MaxItems {
		c.text = clip(raw, p.opts.MaxEvidenceChars)
		p.s.Connections = append(p.s.Connections, c)
	}
}

// maxTreeArity is NCCL_MAX_TREE_ARITY (src/include/device.h): the
// children init.cc prints per channel on a Trees line.
const maxTreeArity = 3

// trees reads "Trees [0] 1/-1/-1->0->-1 [1] ...": for each channel the
// children (down to three), the rank itself and its parent.
func (p *parser) trees(n int, t string) {
	fields := strings.Fields(t[len("Trees"):])
	for i := 0; i+1 < len(fields); i += 2 {
		c := fields[i]
		if len(c) < 3 || c[0] != '[' || c[len(c)-1] != ']' {
			return
		}
		ch, err := strconv.Atoi(c[1 : len(c)-1])
		if err != nil {
			return
		}
		parts := strings.Split(fields[i+1], "->")
		if len(parts) != 3 {
			return
		}
		rank, err1 := strconv.Atoi(parts[1])
		up, err2 := strconv.Atoi(parts[2])
		if err1 != nil || err2 != nil {
			return
		}
		kids := strings.Split(parts[0], "/")
		if len(kids) > maxTreeArity {
			return // not a line NCCL prints; its list would be unbounded
		}
		var down []int
		for _, d := range kids {
			v, err := strconv.Atoi(d)
			if err != nil {
				return
			}
			if v >= 0 {
				down = append(down, v)
			}
		}
		key := [2]int{rank, ch}
		if p.treeKeys[key] || len(p.s.Trees) >= p.opts.MaxItems {
			continue
		}
		p.treeKeys[key] = true
		p.s.Trees = append(p.s.Trees, TreeLink{Channel: ch, Up: up, Down: down, Rank: rank, Line: n})
	}
}

// channelCounts reads "16 coll channels, 0 collnet channels, 16 nvls
// channels, 16 p2p channels, 2 p2p channels per peer" (older releases omit
// some of the parts).
func (p *parser) channelCounts(n int, t, raw string) {
	c := ChannelCounts{Coll: -1, CollNet: -1, NVLS: -1, P2P: -1, P2PPerPeer: -1}
	for _, part := range strings.Split(t, ",") {
		f := strings.Fields(part)
		if len(f) < 2 {
			continue
		}
		v, err := strconv.Atoi(f[0])
		if err != nil {
			continue
		}
		switch words := strings.Join(f[1:], " "); words {
		case "coll channels":
			c.Coll = v
		case "collnet channels":
			c.CollNet = v
		case "nvls channels":
			c.NVLS = v
		case "p2p channels":
			c.P2P = v
		case "p2p channels per peer":
			c.P2PPerPeer = v
		}
	}
	if c.Coll < 0 {
		return
	}
	if p.chanKeys[c] || len(p.s.Channels) >= p.opts.MaxItems {
		return
	}
	p.chanKeys[c] = true
	c.Line = p.ref(n, raw)
	p.s.Channels = append(p.s.Channels, c)
}

// netDevices records the devices of "NET/IB : Using [0]mlx5_0:1/IB ... ;
// OOB ..." and "NET/Socket : Using [0]eth0:10.0.0.1<0> ...".
func (p *parser) netDevices(kind, rest string) {
	rest, _, _ = strings.Cut(rest, "; OOB")
	for _, f := range strings.Fields(rest) {
		f = strings.Trim(f, "{},")
		indexed := false
		for strings.HasPrefix(f, "[") {
			j := strings.IndexByte(f, ']')
			if j < 0 {
				break
			}
			f = strings.TrimLeft(f[j+1:], "={")
			indexed = true
		}
		// A device is "name:address" (or "name:port/link"); after an
		// "[N]" index a name whose address the poster elided
		// ("[0]ib0.<ip>") is a device too.
		if f == "" || (!strings.Contains(f, ":") && !indexed) {
			continue
		}
		name := kind + " " + f
		if !p.devKeys[name] && len(p.s.NetDevices) < p.opts.MaxItems {
			p.devKeys[name] = true
			p.s.NetDevices = append(p.s.NetDevices, name)
		}
	}
}

// pattern reads a searched graph: "Pattern 4, crossNic 0, nChannels 16,
// bw 40.000000/40.000000, type NVL/PIX, sameChannels 1" (releases before
// 2.10 wrote "speed" for "bw").
func (p *parser) pattern(n int, t, raw string) {
	g := GraphLine{Pattern: -1}
	for _, part := range strings.Split(t, ",") {
		f := strings.Fields(part)
		if len(f) != 2 {
			continue
		}
		switch f[0] {
		case "Pattern":
			g.Pattern, _ = strconv.Atoi(f[1])
		case "crossNic":
			g.CrossNic, _ = strconv.Atoi(f[1])
		case "nChannels":
			g.NChannels, _ = strconv.Atoi(f[1])
		case "bw", "speed":
			a, b, _ := strings.Cut(f[1], "/")
			g.BwIntra, _ = finiteFloat(a)
			g.BwInter, _ = finiteFloat(b)
		case "type":
			g.TypeIntra, g.TypeInter, _ = strings.Cut(f[1], "/")
		}
	}
	if g.Pattern < 0 || p.graphKeys[g] || len(p.s.Graphs) >= p.opts.MaxItems {
		return
	}
	p.graphKeys[g] = true
	g.Line = p.ref(n, raw)
	p.s.Graphs = append(p.s.Graphs, g)
}

// envEcho reads "NCCL_P2P_LEVEL set by environment to PHB". Releases before
// 2.12 ended numeric values with a period ("... to 8.").
func (p *parser) envEcho(n int, t, raw string) {
	name, val, _ := strings.Cut(t, " set by environment to ")
	name = strings.TrimSpace(name)
	if i := strings.LastIndexByte(name, ' '); i >= 0 {
		name = name[i+1:]
	}
	if !isEnvName(name) {
		return
	}
	val = strings.TrimSpace(val)
	if strings.HasSuffix(val, ".") {
		if _, err := strconv.ParseInt(strings.TrimSuffix(val, "."), 0, 64); err == nil {
			val = strings.TrimSuffix(val, ".")
		}
	}
	key := [2]string{name, val}
	if p.envKeys[key] || len(p.s.EnvSettings) >= p.opts.MaxItems {
		return
	}
	p.envKeys[key] = true
	p.s.EnvSettings = append(p.s.EnvSettings, EnvSetting{Name: name, Value: val, Line: p.ref(n, raw)})
}

// isEnvName accepts upper-case names of letters, digits and underscores.
func isEnvName(s string) bool {
	if s == "" || len(s) > 128 || (s[0] >= '0' && s[0] <= '9') {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'A' && c <= 'Z') && !(c >= '0' && c <= '9') && c != '_' && !(c >= 'a' && c <= 'z') {
			return false
		}
	}
	return true
}

// algoChoice reads "AllReduce: 1048576 Bytes -> Algo RING proto SIMPLE
// channel{Lo..Hi}={0..15}" (2.24 and later) or "1048576 Bytes -> Algo 1
// proto 2 time 21.3" (2.21 and earlier, numeric ids).
func (p *parser) algoChoice(n int, t string) {
	before, after, _ := strings.Cut(t, " Bytes -> Algo ")
	fn := ""
	if f, rest, ok := strings.Cut(before, ":"); ok {
		fn, before = strings.TrimSpace(f), rest
	}
	bf := strings.Fields(before)
	if len(bf) == 0 {
		return
	}
	bytes, err := strconv.ParseInt(bf[len(bf)-1], 10, 64)
	if err != nil || bytes < 0 {
		return
	}
	af := strings.Fields(after)
	if len(af) < 3 || af[1] != "proto" {
		return
	}
	c := AlgoChoice{Func: fn, Bytes: bytes, Algorithm: algoName(af[0]), Protocol: protoName(af[2])}
	for i := 3; i+1 < len(af); i++ {
		if af[i] == "time" {
			c.TimeUs, _ = finiteFloat(af[i+1])
		}
	}
	key := c
	key.TimeUs = 0
	if p.algoKeys[key] || len(p.s.AlgoChoices) >= p.opts.MaxItems {
		return
	}
	p.algoKeys[key] = true
	c.Line = n
	p.s.AlgoChoices = append(p.s.AlgoChoices, c)
}

// algoName maps NCCL's spellings ("RING", "NVLS_TREE", "1") to the tuning
// registry's names.
func algoName(s string) string {
	if i, err := strconv.Atoi(s); err == nil {
		if a := tune.Algorithm(i); a.Valid() {
			return a.String()
		}
		return s
	}
	if a, err := tune.LookupAlgorithm(strings.ReplaceAll(s, "_", "")); err == nil {
		return a.String()
	}
	return s
}

// protoName maps "SIMPLE", "LL128" or "2" to the registry's names.
func protoName(s string) string {
	if i, err := strconv.Atoi(s); err == nil {
		if pr := tune.Protocol(i); pr.Valid() {
			return pr.String()
		}
		return s
	}
	if pr, err := tune.LookupProtocol(s); err == nil {
		return pr.String()
	}
	return s
}

// comm reads the init lines: "comm 0x.. rank 0 nRanks 8 nNodes 1 localRanks
// 8 localRank 0 MNNVL 0" and "[ncclCommInitRank] comm 0x.. rank 0 nranks 8
// cudaDev 0 nvmlDev 0 busId 18000 commId 0x.. - Init COMPLETE".
func (p *parser) comm(n int, o origin, t string) {
	kv := keyValues(t)
	nranks, ok := atoiKey(kv, "nRanks", "nranks")
	if !ok || nranks <= 0 || nranks > 1<<24 {
		return
	}
	if !p.sizes[nranks] && len(p.s.NRankSizes) < p.opts.MaxItems {
		p.sizes[nranks] = true
		p.s.NRankSizes = append(p.s.NRankSizes, nranks)
	}
	p.s.NRanks = max(p.s.NRanks, nranks)
	if v, ok := atoiKey(kv, "nNodes"); ok && v > 0 {
		p.s.NNodes = max(p.s.NNodes, v)
	}
	if v, ok := atoiKey(kv, "localRanks"); ok && v > 0 {
		p.s.LocalRanks = max(p.s.LocalRanks, v)
	}
	if strings.Contains(t, "Init COMPLETE") {
		p.s.InitComplete++
	}
	rank, ok := atoiKey(kv, "rank")
	bus, hasBus := kv["busId"]
	if !ok || !hasBus {
		return
	}
	r := Rank{Rank: rank, NRanks: nranks, Host: o.Host, CUDADev: -1, NVMLDev: -1, BusID: bus, CommID: kv["commId"], Line: n}
	if v, ok := atoiKey(kv, "cudaDev"); ok {
		r.CUDADev = v
	}
	if v, ok := atoiKey(kv, "nvmlDev"); ok {
		r.NVMLDev = v
	}
	key := strconv.Itoa(rank) + "/" + strconv.Itoa(nranks) + "/" + bus + "/" + o.Host
	if p.rankKeys[key] || len(p.s.Ranks) >= p.opts.MaxItems {
		return
	}
	p.rankKeys[key] = true
	p.s.Ranks = append(p.s.Ranks, r)
}

// keyValues maps each word of t to the word after it.
func keyValues(t string) map[string]string {
	f := strings.Fields(t)
	kv := make(map[string]string, len(f)/2)
	for i := 0; i+1 < len(f); i++ {
		if _, dup := kv[f[i]]; !dup {
			kv[f[i]] = f[i+1]
		}
	}
	return kv
}

func atoiKey(kv map[string]string, keys ...string) (int, bool) {
	for _, k := range keys {
		if v, ok := kv[k]; ok {
			n, err := strconv.Atoi(v)
			if err == nil {
				return n, true
			}
		}
	}
	return 0, false
}

// paths reads a GRAPH path dump line: "GPU/0-18000 :GPU/0-18000
// (0/5000.0/LOC) GPU/0-1b000 (1/20.0/NVL) NET/0-0 (3/12.0/PHB) ...".
func (p *parser) paths(n int, t, raw string) {
	from, rest, ok := strings.Cut(t, " :")
	from = strings.TrimSpace(from)
	if !ok || !strings.Contains(from, "/") || strings.ContainsAny(from, " \t") {
		return
	}
	f := strings.Fields(rest)
	for i := 0; i+1 < len(f); i += 2 {
		to, info := f[i], f[i+1]
		if len(info) < 2 || info[0] != '(' || info[len(info)-1] != ')' {
			return
		}
		parts := strings.Split(info[1:len(info)-1], "/")
		if len(parts) != 3 {
			return
		}
		hops, err1 := strconv.Atoi(parts[0])
		bw, err2 := finiteFloat(parts[1])
		if err1 != nil || err2 != nil {
			return
		}
		key := [2]string{strings.ToLower(from), strings.ToLower(to)}
		if p.pathKeys[key] || len(p.s.Paths) >= p.opts.MaxItems {
			continue
		}
		p.pathKeys[key] = true
		p.s.Paths = append(p.s.Paths, PathLine{From: from, To: to, Hops: hops, Bw: bw, Type: parts[2], Line: n,
			text: clip(raw, p.opts.MaxEvidenceChars)})
	}
}

// errNotFinite reports a number NCCL would never print: NaN, an infinity,
// or a value beyond float64's range.
var errNotFinite = errors.New("not a finite number")

// finiteFloat parses a decimal number of a log line. Unlike
// strconv.ParseFloat it refuses "NaN", "Inf" and out-of-range values (0 and
// an error), so a Summary never holds a float that JSON cannot represent.
func finiteFloat(s string) (float64, error) {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, err
	}
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, errNotFinite
	}
	return f, nil
}
