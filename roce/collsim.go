package roce

import (
	"errors"
	"fmt"

	"github.com/rocekit/rocekit/coll"
	"github.com/rocekit/rocekit/internal/ring"
	"github.com/rocekit/rocekit/rc"
	"github.com/rocekit/rocekit/sim"
	"github.com/rocekit/rocekit/topo"
	"github.com/rocekit/rocekit/traffic"
)

// CollConfig is a collective RunCollective runs on a fabric scenario: the
// operation of package coll over Ranks ranks, rank r on the topology's
// host r, each holding Count elements (coll.Config's meaning).
type CollConfig struct {
	Ranks     int
	Op        coll.Op
	Algo      coll.Algo
	DType     coll.DType
	RedOp     coll.RedOp
	Root      int
	Count     int
	ChunkSize int // 0: coll.DefaultChunkSize
	Channels  int // 0: 1
	// Sharp runs an all-reduce by SHARP instead of Algo: aggregation
	// nodes in the switches (coll.SharpNode) reduce the ranks' chunks on
	// the way up a tree and send the result down. An aggregation node is a
	// port of its switch whose link runs at the switch's total rate (every
	// port's), the rate at which it replicates; SharpRateBps
	// sets another.
	Sharp        bool
	SharpRateBps int64
	// SharpStreams is how many chunks an aggregation node reduces at once
	// (0: coll.DefaultSharpStreams), and SharpReduceBps the bytes of input
	// per second each of those reduces (0: reducing takes no time); see
	// coll.SharpConfig.
	SharpStreams   int
	SharpReduceBps float64
	// Slots is how many chunks a connection has in flight at most: the
	// receiver's landing slots (default 4). The sender posts the next
	// chunk when one it sent has completed, by which time the receiver
	// has taken it (it takes a chunk when its last packet arrives).
	Slots int
	// CorruptChunk, if positive, flips one bit of the CorruptChunk-th
	// chunk rank 0 sends, before it goes on the wire (a test of the check).
	CorruptChunk int
	// Node, when Node.GPUs is above 1, puts that many ranks on each host
	// (rank r on host r / GPUs, GPU r mod GPUs), with the machine's NVLink,
	// PCIe and GPUDirect as NodeSpec models them; Ranks must be a multiple
	// of GPUs. Only the chunks between hosts are RDMA WRITEs on the fabric.
	Node NodeSpec
}

// CollResult is a collective's outcome.
type CollResult struct {
	// Time is when the last rank finished; Bytes the message size per
	// rank as nccl-tests counts it (coll.Bytes).
	Time  sim.Time
	Bytes int64
	// Wrong counts wrong elements over every rank's output (nccl-tests'
	// #wrong), against coll.Reference.
	Wrong int
	// AlgBW and BusBW are nccl-tests' bandwidths in GB/s.
	AlgBW, BusBW float64
	// Complete is true when every rank finished; a collective whose
	// connections failed (retries exhausted) does not, and has no time.
	Complete bool
	// Algo is the algorithm that ran (Auto resolved), unless Sharp.
	Algo  coll.Algo
	Sharp bool
	// Summary is the simulator's summary of the run (frames, ports, CC);
	// its WallSeconds is the simulation's alone, without drawing the
	// inputs and checking the outputs.
	Summary *Summary
}

// collSetup is what makes a fabric scenario a collective's: the rank
// pairs that need a connection, and the landing slots.
type collSetup struct {
	pairs  [][2]int
	hostOf []int          // participant -> host index; nil: the same
	topo   *topo.Topology // SHARP: the topology with its aggregation nodes
	slot   int            // bytes per landing slot (the chunk size)
	slots  int
}

// collPlan is the plan of a collective: the topology's hosts and one
// connection per rank pair.
func (sc *Scenario) collPlan(t *topo.Topology) (*fabricPlan, error) {
	hostIDs := t.Hosts()
	p := &fabricPlan{topo: t}
	p.hosts = make([]HostSpec, len(hostIDs))
	for i, h := range hostIDs {
		p.hosts[i] = HostSpec{Name: t.Node(h).Name}
	}
	fs := sc.flowSpec()
	for _, pr := range sc.coll.pairs {
		if h := sc.coll.hostOf; h != nil {
			pr = [2]int{h[pr[0]], h[pr[1]]}
		}
		if pr[0] >= len(hostIDs) || pr[1] >= len(hostIDs) {
			return nil, badValue("topology", "%d hosts, fewer than the ranks", len(hostIDs))
		}
		p.qps = append(p.qps, QPSpec{From: p.hosts[pr[0]].Name, To: p.hosts[pr[1]].Name, MTU: fs.MTU, Window: fs.Window,
			Timeout: fs.Timeout, RetryCnt: fs.RetryCnt, Outstanding: sc.coll.slots,
			Work: WorkSpec{Op: "write", Count: 1, Size: sc.coll.slot}})
		p.flows = append(p.flows, traffic.Flow{Src: pr[0], Dst: pr[1], Size: 1})
	}
	return p, nil
}

// collConn is a collective's connection from rank from to rank to: the
// chunks waiting for a slot, the copies in flight, and the IDs of the
// chunks in the order they were posted (RC delivers in that order).
type collConn struct {
	run      *collRun
	from, to int
	queue    ring.Ring[collChunk]
	inFlight []collChunk // by slot
	ids      ring.Ring[coll.ChunkID]
	recvs    uint64
}

type collChunk struct {
	id   coll.ChunkID
	data []byte // a copy of the payload, from the run's pool
}

// participant is a rank's (or an aggregation node's) part in a
// collective: a coll.Collective, coll.SharpLeaf or coll.SharpNode.
type participant interface {
	Start(now sim.Time)
	AppendSends(dst []coll.Send) []coll.Send
	Payload(s coll.Send) []byte
	OnRecv(now sim.Time, from int, chunk coll.ChunkID, data []byte) error
	Done() bool
	SendPlan() ([]int, int)
}

// collRun drives the participants over the simulated connections.
type collRun struct {
	s       *Sim
	ranks   []participant
	conns   map[[2]int]*conn
	sends   []coll.Send
	free    map[int][][]byte
	done    int
	last    sim.Time
	errs    int
	corrupt int // the chunk of rank 0 to corrupt, counting down
	slot    int
	nodes   *nodes // several ranks per host, or nil
	pend    []collPending
	free1   []int32 // free entries of pend
}

// collPending is a chunk on its way inside a machine: to be posted on its
// connection (kind pendPost) or handed to its receiver (pendArrive).
type collPending struct {
	from, to int
	id       coll.ChunkID
	data     []byte
}

const (
	pendPost   = iota + 1 // post the WRITE
	pendArrive            // hand the chunk to its rank
	pendOut               // the NIC reads a staged chunk from host memory
	pendIn                // copy a staged chunk from host memory to the GPU
)

// RunCollective runs a collective on the fabric scenario sc (its topology,
// switches, congestion control and faults; its traffic is not used): every
// chunk a rank sends is an RDMA WRITE with immediate of real data into a
// landing slot of the receiver's memory, whose completion hands the chunk
// to the receiving rank, which reduces or copies it and sends what becomes
// ready. Every rank's output is then checked against coll.Reference.
func RunCollective(sc *Scenario, cfg CollConfig, opt Options) (*CollResult, error) {
	if !sc.IsFabric() {
		return nil, errors.New("roce: a collective runs on a fabric scenario (with a topology)")
	}
	if cfg.Slots == 0 {
		cfg.Slots = 4
	}
	if cfg.Slots < 1 || cfg.Slots > 1<<10 {
		return nil, fmt.Errorf("roce: %d landing slots: want 1 to 1024", cfg.Slots)
	}
	if cfg.Channels == 0 {
		cfg.Channels = 1
	}
	if cfg.ChunkSize == 0 {
		cfg.ChunkSize = coll.DefaultChunkSize
	}
	if cfg.Algo == coll.Auto {
		cfg.Algo = coll.ChooseAlgo(cfg.Op, coll.Bytes(cfg.Op, cfg.Count, cfg.DType.Size(), cfg.Ranks), cfg.Ranks)
	}
	// Each rank holds its input and a work buffer, and the check a
	// reference per distinct output: refuse before allocating them what
	// would not fit.
	if cfg.Ranks < 1 || cfg.Count < 0 || cfg.DType.Size() < 1 {
		return nil, fmt.Errorf("roce: collective of %d ranks and %d elements", cfg.Ranks, cfg.Count)
	}
	if err := cfg.Node.Validate(); err != nil {
		return nil, err
	}
	gpus := max(cfg.Node.GPUs, 1)
	if cfg.Ranks%gpus != 0 {
		return nil, fmt.Errorf("roce: %d ranks on hosts of %d GPUs: want a multiple of %d", cfg.Ranks, gpus, gpus)
	}
	if gpus > 1 && cfg.Sharp {
		return nil, errors.New("roce: SHARP with several GPUs per host is not modelled")
	}
	per := float64(coll.Bytes(cfg.Op, cfg.Count, cfg.DType.Size(), cfg.Ranks))
	limit := opt.MaxMemoryBytes
	if limit <= 0 {
		limit = DefaultMemoryLimit
	}
	if need := 3 * per * float64(cfg.Ranks); need > float64(limit) {
		return nil, fmt.Errorf("roce: the collective needs about %s of buffers (%d ranks x 3 x %s), more than the %s limit; lower the size or the ranks",
			humanBytes(need), cfg.Ranks, humanBytes(per), humanBytes(float64(limit)))
	}
	run := &collRun{conns: map[[2]int]*conn{}, free: map[int][][]byte{}, corrupt: cfg.CorruptChunk, slot: cfg.ChunkSize}
	pairs := map[[2]int]bool{}
	var order [][2]int
	var setup collSetup
	if cfg.Sharp {
		if cfg.Op != coll.AllReduce {
			return nil, fmt.Errorf("roce: SHARP runs all-reduce, not %v", cfg.Op)
		}
		if err := run.sharp(sc, &cfg, &setup); err != nil {
			return nil, err
		}
	}
	for r := 0; r < cfg.Ranks && !cfg.Sharp; r++ {
		c, err := coll.New(coll.Config{Ranks: cfg.Ranks, Rank: r, Op: cfg.Op, Algo: cfg.Algo, Count: cfg.Count, DType: cfg.DType,
			RedOp: cfg.RedOp, Root: cfg.Root, ChunkSize: cfg.ChunkSize, Channels: cfg.Channels, Local: gpus})
		if err != nil {
			return nil, err
		}
		coll.Fill(c.Input(), cfg.DType, sc.Seed, r)
		run.ranks = append(run.ranks, c)
	}
	// The pairs that talk, and the largest chunk, the landing slots' size.
	dry, maxLen := collPairs(run.ranks)
	if gpus > 1 {
		setup.hostOf = make([]int, cfg.Ranks)
		for r := range setup.hostOf {
			setup.hostOf[r] = r / gpus
		}
		t, err := sc.loadTopology()
		if err != nil {
			return nil, err
		}
		hosts := t.Hosts()
		if cfg.Ranks/gpus > len(hosts) {
			return nil, badValue("topology", "%d hosts, fewer than the %d the ranks need", len(hosts), cfg.Ranks/gpus)
		}
		run.nodes = newNodes(cfg.Node, cfg.Ranks/gpus, func(h int) float64 {
			pi, _ := t.Port(hosts[h], 0)
			return float64(t.Links()[pi.Link].RateBps) / 8
		})
	}
	for _, p := range dry {
		if run.nodes != nil && run.nodes.host(p[0]) == run.nodes.host(p[1]) {
			continue // inside a machine: no connection
		}
		if !pairs[p] {
			pairs[p] = true
			order = append(order, p)
		}
	}
	c := *sc
	setup.pairs, setup.slot, setup.slots = order, max(maxLen, 8), cfg.Slots
	c.coll = &setup
	if err := c.Validate(); err != nil {
		return nil, err
	}
	s, err := New(&c, opt)
	if err != nil {
		return nil, err
	}
	run.s = s
	for i, p := range order {
		cn := s.conns[i]
		cn.coll = &collConn{run: run, from: p[0], to: p[1], inFlight: make([]collChunk, cfg.Slots)}
		run.conns[p] = cn
	}
	var total int64
	for r, rk := range run.ranks {
		if run.nodes == nil {
			total += int64(sends(rk))
			continue
		}
		for _, p := range order {
			if p[0] == r {
				total += int64(rk.(*coll.Collective).SendsTo(p[1]))
			}
		}
	}
	s.total = total
	for r, rk := range run.ranks {
		rk.Start(0)
		run.deliver(0, r)
	}
	sum, err := s.Run()
	if err != nil {
		return nil, err
	}
	if run.done < cfg.Ranks {
		run.last = 0
	}
	res := &CollResult{Sharp: cfg.Sharp, Bytes: coll.Bytes(cfg.Op, cfg.Count, cfg.DType.Size(), cfg.Ranks), Algo: cfg.Algo, Summary: sum, Time: run.last}
	inputs := make([][]byte, cfg.Ranks)
	outputs := make([][]byte, cfg.Ranks)
	for i := range inputs {
		switch r := run.ranks[i].(type) {
		case *coll.Collective:
			inputs[i], outputs[i] = r.Input(), r.Output()
		case *coll.SharpLeaf:
			inputs[i], outputs[i] = r.Input(), r.Output()
		}
	}
	algo := cfg.Algo
	if cfg.Sharp {
		algo = coll.Ring // any algorithm of the operation: the reference does not depend on it
	}
	want, err := coll.Reference(coll.Config{Ranks: cfg.Ranks, Op: cfg.Op, Algo: algo, Count: cfg.Count, DType: cfg.DType,
		RedOp: cfg.RedOp, Root: cfg.Root}, inputs)
	if err != nil {
		return nil, err
	}
	tol := coll.Tolerance(cfg.DType, cfg.RedOp, cfg.Ranks)
	for i := 0; i < cfg.Ranks; i++ {
		if !run.ranks[i].Done() {
			res.Wrong += cfg.Count // a rank that did not finish has nothing right
			continue
		}
		res.Wrong += coll.Check(outputs[i], want[i], cfg.DType, tol)
	}
	res.Wrong += run.errs
	res.Complete = run.done >= cfg.Ranks
	if res.Complete && res.Time > 0 {
		res.AlgBW = coll.AlgBW(res.Bytes, res.Time.Seconds())
		res.BusBW = coll.BusBW(cfg.Op, res.Bytes, cfg.Ranks, res.Time.Seconds())
	}
	return res, nil
}

// collPairs returns the (from, to) pairs that exchange chunks, from the
// ranks' schedules, in a fixed order, and the largest chunk.
func collPairs(ranks []participant) ([][2]int, int) {
	var pairs [][2]int
	maxLen := 0
	for r, c := range ranks {
		to, n := c.SendPlan()
		for _, q := range to {
			pairs = append(pairs, [2]int{r, q})
		}
		maxLen = max(maxLen, n)
	}
	return pairs, maxLen
}

// deliver takes rank r's ready sends and queues each on its connection.
func (run *collRun) deliver(now sim.Time, r int) {
	rk := run.ranks[r]
	run.sends = rk.AppendSends(run.sends[:0])
	for _, sd := range run.sends {
		data := run.get(sd.Len)
		copy(data, rk.Payload(sd))
		if r == 0 && run.corrupt > 0 {
			if run.corrupt--; run.corrupt == 0 && len(data) >= 4 {
				data[len(data)/2&^3+3] ^= 0x40 // an exponent bit of a float32, bit 30 of an int32
			}
		}
		if ns := run.nodes; ns != nil {
			if ns.host(r) == ns.host(sd.To) {
				run.later(ns.local(now, r, sd.To, sd.Len), pendArrive, r, sd.To, sd.Chunk, data)
			} else {
				at, post := ns.toWire(now, r, sd.Len)
				run.later(at, pick(post, pendPost, pendOut), r, sd.To, sd.Chunk, data)
			}
			continue
		}
		c := run.conns[[2]int{r, sd.To}]
		c.coll.queue.Push(collChunk{id: sd.Chunk, data: data})
		c.collPump(now)
	}
	run.sharpArm(r)
	if rk.Done() {
		run.finished(now)
	}
}

// finished records a rank done: its output is final. The run goes on
// until every chunk's send completion (its ACK) is back.
func (run *collRun) finished(now sim.Time) {
	run.done++
	run.last = max(run.last, now)
}

// later schedules a chunk's next move inside a machine at time at.
func (run *collRun) later(at sim.Time, kind uint32, from, to int, id coll.ChunkID, data []byte) {
	var i int32
	if n := len(run.free1); n > 0 {
		i = run.free1[n-1]
		run.free1 = run.free1[:n-1]
	} else {
		i = int32(len(run.pend))
		run.pend = append(run.pend, collPending{})
	}
	run.pend[i] = collPending{from: from, to: to, id: id, data: data}
	run.s.eng.Schedule(at, run, kind, uint64(i))
}

// Handle carries out a move that later scheduled: a chunk staged for the
// network is posted on its connection; a chunk that has arrived in a
// GPU's memory is handed to its rank.
func (run *collRun) Handle(ev sim.Event) {
	now := run.s.eng.Now()
	p := run.pend[ev.A]
	run.pend[ev.A] = collPending{}
	run.free1 = append(run.free1, int32(ev.A))
	switch ev.Kind {
	case pendOut:
		run.later(run.nodes.toWireStaged(now, p.from, len(p.data)), pendPost, p.from, p.to, p.id, p.data)
		return
	case pendIn:
		run.later(run.nodes.fromWireStaged(now, p.to, len(p.data)), pendArrive, p.from, p.to, p.id, p.data)
		return
	case pendPost:
		c := run.conns[[2]int{p.from, p.to}]
		c.coll.queue.Push(collChunk{id: p.id, data: p.data})
		c.collPump(now)
		return
	}
	if err := run.ranks[p.to].OnRecv(now, p.from, p.id, p.data); err != nil {
		run.errs++ // counted in #wrong; OnRecv changed nothing
	}
	run.put(p.data)
	run.deliver(now, p.to)
}

func pick(c bool, a, b uint32) uint32 {
	if c {
		return a
	}
	return b
}

func (run *collRun) get(n int) []byte {
	if l := run.free[n]; len(l) > 0 {
		b := l[len(l)-1]
		run.free[n] = l[:len(l)-1]
		return b
	}
	return make([]byte, n)
}

func (run *collRun) put(b []byte) { run.free[len(b)] = append(run.free[len(b)], b) }

// collStart posts the responder's receive WQEs, one per landing slot: an
// RDMA WRITE with immediate consumes one (and writes no receive buffer).
func (c *conn) collStart(now sim.Time) {
	for i := 0; i < int(c.q); i++ {
		c.collPostRecv()
	}
	c.req.service(now)
	c.rsp.service(now)
}

func (c *conn) collPostRecv() {
	if err := c.rsp.qp.PostRecv(rc.RecvWR{ID: c.recvNext}); err != nil {
		panic(fmt.Sprintf("roce: collective receive WQE: %v", err))
	}
	c.recvNext++
}

// collPump posts queued chunks while landing slots are free: chunk k goes
// to slot k mod Slots of the receiver's region.
func (c *conn) collPump(now sim.Time) {
	cc := c.coll
	for cc.queue.Len() > 0 && c.posted-c.completed < int64(c.q) {
		ch := cc.queue.Pop()
		slot := int(c.posted % int64(c.q))
		cc.inFlight[slot] = ch
		cc.ids.Push(ch.id)
		wr := rc.WR{ID: uint64(c.posted), Opcode: rc.WRRDMAWriteWithImm, Local: ch.data, Imm: uint32(ch.id.Seq),
			RemoteAddr: c.mr.Addr + uint64(slot*int(c.slot)), RKey: c.mr.RKey}
		*c.postTime(slot) = now
		c.posted++
		c.s.st.posted++
		if err := c.req.qp.PostSend(wr); err != nil {
			panic(fmt.Sprintf("roce: collective chunk of %d bytes: %v", len(ch.data), err))
		}
	}
	// Not service: this may run inside a service of the same NIC's QPs
	// (a chunk landing releases the next), whose completions it would
	// take over.
	e := &c.req
	if !e.inActive && e.qp.HasOutgoing() {
		e.inActive = true
		e.nic.active.Push(e)
	}
	e.arm(now)
	e.nic.kick(now)
}

// collSent is a chunk's send completion: its copy goes back to the pool
// and the next queued chunk may take its slot.
func (c *conn) collSent(now sim.Time, cp *rc.Completion) {
	s, cc := c.s, c.coll
	slot := int(c.completed % int64(c.q))
	c.completed++
	s.done++
	s.st.wrStatus[cp.Status&31]++
	s.st.lastCompletion = now
	if cp.Status == rc.Success {
		s.hist.Record(now - *c.postTime(slot))
		s.st.bytes += uint64(cp.ByteLen)
	} else {
		cc.run.errs++
		c.fail("collective chunk %d to rank %d: %v", c.completed-1, cc.to, cp.Status)
	}
	cc.run.put(cc.inFlight[slot].data)
	cc.inFlight[slot] = collChunk{}
	c.collPump(now)
}

// collRecv is a chunk landing at the receiver: its bytes are in the slot
// the sender wrote, its ID the next one posted on the connection.
func (c *conn) collRecv(now sim.Time, cp *rc.Completion) {
	s, cc := c.s, c.coll
	s.st.recvStatus[cp.Status&31]++
	if cp.Status != rc.Success {
		return
	}
	slot := int(cc.recvs % uint64(c.q))
	cc.recvs++
	id := cc.ids.Pop()
	if uint32(id.Seq) != cp.Imm {
		cc.run.errs++
		c.fail("chunk with immediate %d where %d was next", cp.Imm, id.Seq)
	}
	off := slot * int(c.slot)
	if ns := cc.run.nodes; ns != nil {
		data := cc.run.get(int(cp.ByteLen))
		copy(data, c.mr.Buf[off:off+int(cp.ByteLen)])
		at, arrived := ns.fromWire(now, cc.to, len(data))
		cc.run.later(at, pick(arrived, pendArrive, pendIn), cc.from, cc.to, id, data)
		s.st.checks++
		c.collPostRecv()
		return
	}
	rk := cc.run.ranks[cc.to]
	if err := rk.OnRecv(now, cc.from, id, c.mr.Buf[off:off+int(cp.ByteLen)]); err != nil {
		cc.run.errs++
		c.fail("rank %d: %v", cc.to, err)
	}
	s.st.checks++
	c.collPostRecv()
	cc.run.deliver(now, cc.to)
}

// sends is how many chunks a participant sends in all.
func sends(p participant) int {
	switch r := p.(type) {
	case *coll.Collective:
		return r.Stats().Sends
	case *coll.SharpNode:
		return r.Sends()
	case *coll.SharpLeaf:
		return r.Sends()
	}
	return 0
}
