package roce

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rocekit/rocekit/rc"
)

const minimal = `{"hosts": [{"name": "a"}, {"name": "b"}],
 "links": [{"a": "a", "b": "b", "bandwidth_gbps": 10, "delay_ns": 100}],
 "qps": [{"from": "a", "to": "b", "work": {"count": 1, "size": 1}}]}`

// Strict decoding: unknown keys (at any depth) are errors naming the key,
// as are wrong types, trailing data and values out of range; errors name
// the path of the offending value as the file writes it, and for what the
// JSON decoder finds, its line and column.
func TestParseScenarioErrors(t *testing.T) {
	_, err := ParseScenario([]byte(minimal))
	require.NoError(t, err)
	for _, c := range []struct{ text, want string }{
		{`{"hosts": [], "bogus": 1}`, "scenario: bogus: unknown key at line 1 column 15"},
		{`{"hosts": [{"name": "a", "nic": 2}]}`, "scenario: hosts[0].nic: unknown key at line 1 column 26"},
		{strings.Replace(minimal, `"delay_ns": 100`, `"delay_ns": 100, "faults": {"los": 0.1}`, 1), "scenario: links[0].faults.los: unknown key at line 2 column 83"},
		{strings.Replace(minimal, `"size": 1`, `"size": 1, "sizes": 2`, 1), "scenario: qps[0].work.sizes: unknown key at line 3 column 67"},
		{strings.Replace(minimal, `"delay_ns": 100`, `"delay_ns": "100ns"`, 1), "scenario: links[0].delay_ns: expected a number, got a string at line 2 column 67"},
		{minimal + `{}`, "scenario: data after the JSON value at line 3 column 69"},
		{`{"hosts": [`, "scenario: unexpected end of JSON input at line 1 column 12"},
		{"{\"seed\": 1,\n \"hosts\": [}", "scenario: invalid character '}' looking for beginning of value at line 2 column 12"},
		{`[{"hosts": []}]`, "the scenario must be an object, got an array at line 1 column 1"},
		{"", "scenario: no JSON value: the file is empty"},
		{`{"hosts": []}`, "hosts: at least one host"},
		{`{"hosts": [{"name": "a"}, {"name": "a"}]}`, `hosts[1].name: "a" is used twice`},
		{`{"hosts": [{"name": "a", "mac": "02:00"}]}`, "hosts[0].mac"},
		{`{"hosts": [{"name": "a", "ip": "::1"}]}`, "hosts[0].ip"},
		{strings.Replace(minimal, `"b": "b"`, `"b": "c"`, 1), `links[0].b: "c" is not a host or the switch`},
		{strings.Replace(minimal, `"bandwidth_gbps": 10`, `"bandwidth_gbps": 0`, 1), "links[0].bandwidth_gbps"},
		{strings.Replace(minimal, `"delay_ns": 100`, `"delay_ns": -1`, 1), "links[0].delay_ns"},
		{strings.Replace(minimal, `"delay_ns": 100`, `"delay_ns": 100, "faults": {"loss": 1.5}`, 1), "scenario: links[0].faults.loss: 1.5: want a probability in [0, 1]"},
		{strings.Replace(minimal, `"delay_ns": 100`, `"delay_ns": 100, "a_to_b": {"burst": {"p_good_bad": 0.1, "p_bad_good": 2, "loss_bad": 1}}`, 1),
			"scenario: links[0].a_to_b.burst.p_bad_good: 2: want a probability in [0, 1]"},
		{strings.Replace(minimal, `"delay_ns": 100`, `"delay_ns": 100, "faults": {"reorder": 0.1, "reorder_delay_ns": -5}`, 1),
			"scenario: links[0].faults.reorder_delay_ns: -5: want a delay in ns, 0 or more"},
		{strings.Replace(minimal, `"delay_ns": 100`, `"delay_ns": 100, "b_to_a": {"corrupt": -0.1}`, 1), "scenario: links[0].b_to_a.corrupt: -0.1: want a probability in [0, 1]"},
		{strings.Replace(minimal, `"delay_ns": 100`, `"delay_ns": 100, "dead": [{"from_ns": 5, "to_ns": 3}]`, 1), "links[0].dead[0].to_ns"},
		{strings.Replace(minimal, `"delay_ns": 100`, `"delay_ns": 100, "dead": [{"from_ns": 5, "dir": "up"}]`, 1), "links[0].dead[0].dir"},
		{strings.Replace(minimal, `"links": [`, `"links": [{"a": "a", "b": "b", "bandwidth_gbps": 1}, `, 1), "a second link"},
		{`{"hosts": [{"name": "a"}, {"name": "b"}, {"name": "c"}], "links": [{"a": "a", "b": "b", "bandwidth_gbps": 1}, {"a": "c", "b": "a", "bandwidth_gbps": 1}]}`, `host "a" already has a link`},
		{`{"hosts": [{"name": "a"}, {"name": "b"}], "links": [], "qps": [{"from": "a", "to": "b"}]}`, `qps[0]: no path from "a" to "b"`},
		{strings.Replace(minimal, `"to": "b"`, `"to": "a"`, 1), "qps[0]: from and to are the same host"},
		{strings.Replace(minimal, `"to": "b"`, `"to": "b", "mtu": 1500`, 1), "qps[0].mtu: 1500"},
		{strings.Replace(minimal, `"to": "b"`, `"to": "b", "timeout": 32`, 1), "qps[0].timeout"},
		{strings.Replace(minimal, `"to": "b"`, `"to": "b", "retry_cnt": 8`, 1), "qps[0].retry_cnt"},
		{strings.Replace(minimal, `"to": "b"`, `"to": "b", "rnr_retry": 9`, 1), "qps[0].rnr_retry"},
		{strings.Replace(minimal, `"to": "b"`, `"to": "b", "min_rnr_timer": 40`, 1), "qps[0].min_rnr_timer"},
		{strings.Replace(minimal, `"to": "b"`, `"to": "b", "ord": 129`, 1), "qps[0].ord"},
		{strings.Replace(minimal, `"to": "b"`, `"to": "b", "sq_psn": 16777216`, 1), "PSNs are 24 bits"},
		{strings.Replace(minimal, `"to": "b"`, `"to": "b", "timeout": -1`, 1), "scenario: qps[0].timeout: expected an integer from 0 to 255, got number -1 at line 3 column 46"},
		{strings.Replace(minimal, `"count": 1, "size": 1`, `"op": "flush"`, 1), `qps[0].work.op: "flush"`},
		{strings.Replace(minimal, `"count": 1, "size": 1`, `"size": 10, "size_max": 5`, 1), "qps[0].work.size_max"},
		// 2^31+1: over the limit, or (where int has 32 bits) not an int at all.
		{strings.Replace(minimal, `"count": 1, "size": 1`, `"size": 2147483649`, 1), "qps[0].work.size"},
		{strings.Replace(minimal, `"count": 1, "size": 1`, `"op": "write", "mix": {"read": 1}`, 1), "qps[0].work.mix"},
		{strings.Replace(minimal, `"count": 1, "size": 1`, `"wrs": [{"op": "mix"}]`, 1), "qps[0].work.wrs[0].op"},
		{strings.Replace(minimal, `"count": 1, "size": 1`, `"size": 5, "wrs": [{"op": "read"}]`, 1), "leave out op, size"},
		{strings.Replace(minimal, `"to": "b", "work": {"count": 1, "size": 1}`, `"to": "b", "ord": 0, "work": {"op": "read"}`, 1), "needs ord > 0"},
		{`{"hosts": [{"name": "sw"}], "switch": {"name": "sw"}}`, `switch.name: "sw" is also a host`},
	} {
		_, err := ParseScenario([]byte(c.text))
		if assert.Error(t, err, c.text) {
			assert.Contains(t, err.Error(), c.want, c.text)
		}
	}
}

// The default scenario, and every scenario, survives MarshalIndent and
// ParseScenario unchanged.
func TestScenarioRoundTrip(t *testing.T) {
	sc := DefaultScenario()
	require.NoError(t, sc.Validate())
	back, err := ParseScenario(sc.MarshalIndent())
	require.NoError(t, err)
	assert.Equal(t, sc, back)
	assert.Equal(t, sc, sc.Clone())
	files, _ := filepath.Glob("testdata/*.json")
	for _, f := range files {
		sc, err := LoadScenario(f)
		require.NoError(t, err, f)
		back, err := ParseScenario(sc.MarshalIndent())
		require.NoError(t, err, f)
		assert.Equal(t, sc, back, f)
	}
}

// The default scenario's QPs get the attributes perftest and common NIC
// setups use: local ACK timeout 14 (4.096 us x 2^14 = 67.1 ms), retry_cnt 7,
// rnr_retry 7.
func TestDefaultScenarioQPAttributes(t *testing.T) {
	s, err := New(DefaultScenario(), Options{})
	require.NoError(t, err)
	require.Len(t, s.conns, 1)
	for _, e := range []*qpEnd{&s.conns[0].req, &s.conns[0].rsp} {
		cfg := e.qp.Config()
		assert.Equal(t, uint8(14), cfg.Timeout)
		assert.Equal(t, uint8(7), cfg.RetryCnt)
		assert.Equal(t, uint8(7), cfg.RNRRetry)
		assert.False(t, cfg.RetryCnt7Infinite)
		assert.InDelta(t, 67.108864e-3, float64(rc.AckTimeout(cfg.Timeout))/1e12, 1e-12) // picoseconds
	}
}

// The example scenarios in testdata run to completion with their data
// intact; each shows what it is for.
func TestScenarioFiles(t *testing.T) {
	check := map[string]func(t *testing.T, s *Summary){
		"fabric-incast-pfc.json": func(t *testing.T, s *Summary) {
			// An 8:1 incast through a switch with a 400 KB buffer:
			// lossless by PFC, every flow complete.
			assert.Equal(t, 8, s.FlowsCompleted)
			assert.Positive(t, s.PFCPauses)
			assert.Zero(t, s.Drops["buffer"]+s.Drops["queue"])
			assert.Zero(t, s.Retransmissions)
		},
		"fabric-fattree-linkdown.json": func(t *testing.T, s *Summary) {
			// An uplink dies 2 us in; routing moves off it 5 us later.
			// Frames die on it meanwhile, and RC recovers them; a lossy
			// host link adds losses.
			assert.Equal(t, 240, s.FlowsCompleted)
			assert.Equal(t, 1, s.Reroutes)
			assert.Positive(t, s.Drops["dead"])
			assert.Positive(t, s.Drops["loss"])
			assert.Positive(t, s.Retransmissions)
		},
		"incast.json": func(t *testing.T, s *Summary) {
			assert.Equal(t, uint64(1200), s.WRCompleted["SUCCESS"])
			assert.NotZero(t, s.Network.Drops["queue"])
			assert.NotZero(t, s.Network.ECNMarked)
		},
		"incast-pfc.json": func(t *testing.T, s *Summary) {
			// incast.json made lossless: the same load, no drops, no
			// retransmissions, the senders paused instead.
			assert.Equal(t, uint64(1200), s.WRCompleted["SUCCESS"])
			assert.Zero(t, s.Network.Drops["queue"])
			assert.Zero(t, s.Retransmissions)
			assert.Zero(t, s.Timeouts)
			assert.NotZero(t, s.Network.PFCPauses)
			assert.Positive(t, s.Network.PFCPausedNS)
			assert.Greater(t, s.GoodputGbps, 90.0, "the bottleneck never idles")
		},
		"lossy-mix.json": func(t *testing.T, s *Summary) {
			assert.Equal(t, uint64(1200), s.WRCompleted["SUCCESS"])
			assert.NotZero(t, s.Network.Drops["burst"])
			assert.NotZero(t, s.ICRCErrors)
			assert.NotZero(t, s.Network.Reordered)
			assert.NotZero(t, s.RecvCompleted["SUCCESS"])
		},
		"dead-link.json": func(t *testing.T, s *Summary) {
			assert.Equal(t, uint64(1), s.WRCompleted["RETRY_EXC_ERR"])
			assert.Equal(t, uint64(4), s.Timeouts)
			assert.Equal(t, uint64(100), s.WRCompleted["SUCCESS"]+s.WRCompleted["RETRY_EXC_ERR"]+s.WRCompleted["WR_FLUSH_ERR"])
		},
		"rnr.json": func(t *testing.T, s *Summary) {
			assert.Equal(t, uint64(300), s.WRCompleted["SUCCESS"])
			assert.Equal(t, uint64(200), s.RecvCompleted["SUCCESS"])
			assert.NotZero(t, s.RNRNAKs)
		},
		"flap.json": func(t *testing.T, s *Summary) {
			assert.Equal(t, uint64(400), s.WRCompleted["SUCCESS"])
			assert.NotZero(t, s.Network.Drops["dead"])
			assert.NotZero(t, s.Timeouts)
		},
	}
	files, err := filepath.Glob("testdata/*.json")
	require.NoError(t, err)
	require.Len(t, files, len(check))
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			sc, err := LoadScenario(f)
			require.NoError(t, err)
			sum := run(t, sc, Options{})
			require.True(t, sum.Complete)
			require.True(t, sum.DataIntegrityOK, sum.FirstFailure)
			require.True(t, sum.CompletionOrderOK)
			check[filepath.Base(f)](t, sum)
		})
	}
}

func TestLoadScenarioErrors(t *testing.T) {
	_, err := LoadScenario(filepath.Join(t.TempDir(), "missing.json"))
	assert.ErrorIs(t, err, os.ErrNotExist)
	p := filepath.Join(t.TempDir(), "bad.json")
	require.NoError(t, os.WriteFile(p, []byte(`{"hostz": []}`), 0o644))
	_, err = LoadScenario(p)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "bad.json")
	assert.Equal(t, p+": scenario: hostz: unknown key at line 1 column 2", err.Error())
}

// A scenario whose buffers would not fit is refused before anything is
// allocated.
func TestMemoryLimit(t *testing.T) {
	sc := twoHosts(false, nil, QPSpec{Count: 1000, Outstanding: 64, Work: WorkSpec{Count: 1, Size: 1 << 30}})
	_, err := New(sc, Options{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "GiB")
}
