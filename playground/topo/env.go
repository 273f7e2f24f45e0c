package topo

import (
	"fmt"
	"strings"

	"github.com/distributed-nav/distributed-nav/playground/ncclenv"
)

// NetDevsPolicy is NCCL_NETDEVS_POLICY (graph.h:101-106).
type NetDevsPolicy int

// Policies for how many NICs a GPU may use.
const (
	NetDevsAuto NetDevsPolicy = iota // share the closest NICs among the closest GPUs
	NetDevsAll                       // every closest NIC
	NetDevsMax                       // at most NetDevsMax NICs
)

// Config holds the environment variables that steer path computation, read
// once with NCCL's own parsing rules.
type Config struct {
	// UserP2PLevel is the level from NCCL_P2P_DISABLE/NCCL_P2P_LEVEL, or -1.
	UserP2PLevel PathType
	// UserGDRLevel is the level from NCCL_NET_GDR_LEVEL, or -1.
	UserGDRLevel      PathType
	NVBDisable        bool  // NCCL_NVB_DISABLE
	PXNDisable        bool  // NCCL_PXN_DISABLE
	PXNC2C            bool  // NCCL_PXN_C2C (default 1)
	IgnoreDisabledP2P int64 // NCCL_IGNORE_DISABLED_P2P (0, 1, or 2 = skip NVML)
	SHMDisable        bool  // NCCL_SHM_DISABLE
	NetGDRRead        int64 // NCCL_NET_GDR_READ (default -2: automatic)
	NetGDRC2C         bool  // NCCL_NET_GDR_C2C (default 1)
	NetDisableIntra   bool  // NCCL_NET_DISABLE_INTRA
	P2PUseCudaMemcpy  bool  // NCCL_P2P_USE_CUDA_MEMCPY
	NetDevsPolicy     NetDevsPolicy
	NetDevsMax        int
	// Notes explain how NCCL interprets unusual values.
	Notes []string
}

// levelsOldToNew maps the legacy integer levels 0-5 (paths.cc:243).
var levelsOldToNew = [...]PathType{PathLOC, PathPIX, PathPXB, PathPHB, PathSYS, PathSYS}

// readLevel follows ncclGetLevel
// (https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/graph/paths.cc#L244-L280):
// a disable variable equal to 1 means LOC; otherwise the level variable must
// spell a path name exactly (case-sensitive, LOC..SYS) or start with a digit
// (legacy level, capped at 5). Anything else leaves the level unset (-1).
func readLevel(env ncclenv.Env, disableName, levelName string, notes *[]string) PathType {
	if disableName != "" {
		if s, ok := env.Lookup(disableName); ok {
			if ncclenv.ParseCInt(s).Value == 1 {
				return PathLOC
			}
		}
	}
	s, ok := env.Lookup(levelName)
	if !ok {
		return -1
	}
	for i := PathLOC; i <= PathSYS; i++ {
		if s == pathTypeNames[i] {
			return i
		}
	}
	if s != "" && s[0] >= '0' && s[0] <= '9' {
		v := ncclenv.ParseCInt(s).Value
		if v > int64(len(levelsOldToNew)-1) {
			v = int64(len(levelsOldToNew) - 1)
		}
		return levelsOldToNew[v]
	}
	hint := ""
	if t, err := ParsePathType(s); err == nil && t <= PathSYS {
		hint = fmt.Sprintf(" (NCCL compares case-sensitively; write %s)", t)
	}
	*notes = append(*notes, fmt.Sprintf("%s=%q is not a level NCCL recognises, so it is ignored%s", levelName, s, hint))
	return -1
}

// NewConfig reads the path-related NCCL variables from env.
func NewConfig(env ncclenv.Env) Config {
	c := Config{}
	param := func(name string, def int64) int64 {
		v, note := env.Param(name, def)
		if note != "" {
			c.Notes = append(c.Notes, note)
		}
		return v
	}
	c.UserP2PLevel = readLevel(env, "NCCL_P2P_DISABLE", "NCCL_P2P_LEVEL", &c.Notes)
	c.UserGDRLevel = readLevel(env, "", "NCCL_NET_GDR_LEVEL", &c.Notes)
	c.NVBDisable = param("NCCL_NVB_DISABLE", 0) != 0
	c.PXNDisable = param("NCCL_PXN_DISABLE", 0) == 1
	c.PXNC2C = param("NCCL_PXN_C2C", 1) != 0
	c.IgnoreDisabledP2P = param("NCCL_IGNORE_DISABLED_P2P", 0)
	c.SHMDisable = param("NCCL_SHM_DISABLE", 0) == 1
	c.NetGDRRead = param("NCCL_NET_GDR_READ", -2)
	c.NetGDRC2C = param("NCCL_NET_GDR_C2C", 1) != 0
	c.NetDisableIntra = param("NCCL_NET_DISABLE_INTRA", 0) == 1
	c.P2PUseCudaMemcpy = param("NCCL_P2P_USE_CUDA_MEMCPY", 0) != 0
	c.NetDevsPolicy = NetDevsAuto
	if s, ok := env.Lookup("NCCL_NETDEVS_POLICY"); ok {
		// getNetDevsPolicyOnce, topo.cc:2004-2025.
		switch {
		case strings.EqualFold(s, "AUTO"):
		case strings.EqualFold(s, "ALL"):
			c.NetDevsPolicy = NetDevsAll
		case len(s) >= 4 && strings.EqualFold(s[:4], "MAX:"):
			n, _ := cStrtol(s[4:], 10)
			if n > 0 && n <= MaxNodesPerType {
				c.NetDevsPolicy, c.NetDevsMax = NetDevsMax, int(n)
			} else {
				c.Notes = append(c.Notes, fmt.Sprintf("NCCL_NETDEVS_POLICY=%q needs a positive count; NCCL uses AUTO", s))
			}
		default:
			c.Notes = append(c.Notes, fmt.Sprintf("NCCL_NETDEVS_POLICY=%q is not recognised; NCCL uses AUTO", s))
		}
	}
	return c
}
