/* abi_test.c: the C ABI of librocekit from C, bad input included. Built and
 * run by dpi/abi_test.go against the c-archive; prints one line per failed
 * check and "checks: N passed" at the end, and exits 1 if any failed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rocekit.h"

static int passed, failed;
static char msg[512];

#define CHECK(cond, ...)                                   \
	do {                                                   \
		if (cond) {                                        \
			passed++;                                      \
		} else {                                           \
			failed++;                                      \
			printf("FAIL line %d: %s: ", __LINE__, #cond); \
			printf(__VA_ARGS__);                           \
			printf("\n");                                  \
		}                                                  \
	} while (0)

static const char* last(void) {
	rocekit_last_error(msg, sizeof msg);
	return msg;
}

/* Moves every due frame from one peer to the other, feeding the scoreboard. */
static int move(int32_t from, int32_t to, int32_t sb, int64_t now, int dir) {
	static uint8_t buf[9216];
	int32_t n = 0;
	int moved = 0;
	while (rocekit_peer_tx(from, buf, sizeof buf, &n) == ROCEKIT_OK) {
		CHECK(rocekit_sb_feed(sb, buf, n, now, dir) == ROCEKIT_OK, "%s", last());
		int st = rocekit_peer_rx(to, buf, n, now);
		CHECK(st == ROCEKIT_OK, "rx: %d %s", st, last());
		moved++;
	}
	return moved;
}

int main(void) {
	uint8_t frame[2048], payload[101];
	int32_t len = -1;
	memset(payload, 0xA5, sizeof payload);

	/* Build and parse a WRITE Only: 14+20+8+12+16+101+3+4 = 178 bytes. */
	int st = rocekit_build(0x0A, 0x12, 0xFFFFFE, ROCEKIT_F_ACKREQ, 0, 0, 0x10000040ull, 0x300, 101, 0,
	                       payload, sizeof payload, 0, frame, sizeof frame, &len);
	CHECK(st == ROCEKIT_OK && len == 178, "st %d len %d %s", st, len, last());
	uint32_t op, qp, psn, ack, syn, msn, rkey, dlen, plen, icrc_ok;
	uint64_t va;
	st = rocekit_parse(frame, len, &op, &qp, &psn, &ack, &syn, &msn, &va, &rkey, &dlen, &plen, &icrc_ok);
	CHECK(st == ROCEKIT_OK, "%s", last());
	CHECK(op == 0x0A && qp == 0x12 && psn == 0xFFFFFE && ack == 1, "op %x qp %x psn %x ack %u", op, qp, psn, ack);
	CHECK(va == 0x10000040ull && rkey == 0x300 && dlen == 101 && plen == 101 && icrc_ok == 1,
	      "va %llx rkey %x dlen %u plen %u icrc %u", (unsigned long long)va, rkey, dlen, plen, icrc_ok);
	/* Outputs may be NULL. */
	CHECK(rocekit_parse(frame, len, NULL, NULL, &psn, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL) == ROCEKIT_OK,
	      "%s", last());
	/* A deliberately wrong ICRC. */
	st = rocekit_build(0x0A, 0x12, 5, 0, 0, 0, 0x1000, 1, 4, 0, payload, 4, 0xDEAD, frame, sizeof frame, &len);
	CHECK(st == ROCEKIT_OK, "%s", last());
	rocekit_parse(frame, len, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, &icrc_ok);
	CHECK(icrc_ok == 0, "icrc_ok %u", icrc_ok);
	/* An ACK, reversed: 62 bytes, NAK PSN sequence error syndrome 0x60. */
	st = rocekit_build(0x11, 0x11, 7, ROCEKIT_F_REVERSE, 0x60, 3, 0, 0, 0, 0, NULL, 0, 0, frame, sizeof frame, &len);
	CHECK(st == ROCEKIT_OK && len == 62, "st %d len %d", st, len);
	rocekit_parse(frame, len, &op, NULL, &psn, NULL, &syn, &msn, NULL, NULL, NULL, NULL, &icrc_ok);
	CHECK(op == 0x11 && psn == 7 && syn == 0x60 && msn == 3 && icrc_ok == 1, "op %x psn %u syn %x msn %u", op, psn, syn, msn);

	/* Bad input: short frames, null pointers, negative lengths, small buffers. */
	st = rocekit_parse(frame, 20, &op, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
	CHECK(st == ROCEKIT_ERR_FRAME && strstr(last(), "frame of 20 bytes"), "st %d: %s", st, msg);
	st = rocekit_parse(frame, 61, &op, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
	CHECK(st == ROCEKIT_ERR_FRAME, "ACK cut by a byte: st %d", st);
	st = rocekit_parse(NULL, 62, &op, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
	CHECK(st == ROCEKIT_ERR_ARG && strstr(last(), "null frame"), "st %d: %s", st, msg);
	st = rocekit_parse(frame, -5, &op, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
	CHECK(st == ROCEKIT_ERR_ARG && strstr(last(), "negative length -5"), "st %d: %s", st, msg);
	st = rocekit_build(0x04, 1, 1, 0, 0, 0, 0, 0, 0, 0, payload, 100, 0, frame, 100, &len);
	CHECK(st == ROCEKIT_ERR_SPACE && strstr(last(), "needs 158"), "st %d: %s", st, msg);
	st = rocekit_build(0x15, 1, 1, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0, frame, sizeof frame, &len);
	CHECK(st == ROCEKIT_ERR_ARG && strstr(last(), "opcode 0x15"), "st %d: %s", st, msg);
	st = rocekit_build(0x04, 1, 1, 0, 0, 0, 0, 0, 0, 0, NULL, 10, 0, frame, sizeof frame, &len);
	CHECK(st == ROCEKIT_ERR_ARG && strstr(last(), "null pointer"), "st %d: %s", st, msg);
	st = rocekit_build(0x04, 1, 1, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0, NULL, 10, &len);
	CHECK(st == ROCEKIT_ERR_ARG, "null buf: st %d", st);
	CHECK(rocekit_last_error(NULL, 10) == ROCEKIT_ERR_ARG, "last_error(NULL)");
	char tiny[4];
	rocekit_last_error(tiny, sizeof tiny);
	CHECK(strlen(tiny) == 3, "truncated message: %s", tiny);

	/* Handles. */
	int32_t a = 0, b = 0, sb = 0;
	CHECK(rocekit_peer_tick(12345, 0) == ROCEKIT_ERR_HANDLE && strstr(last(), "handle 12345"), "%s", msg);
	CHECK(rocekit_peer_new(0x11, 0x12, 100, 5000, 1000, 0x10000000ull, 0x100, 1 << 20, &a) == ROCEKIT_ERR_ARG &&
	          strstr(last(), "mtu 1000"), "%s", msg);
	CHECK(rocekit_peer_new(0x11, 0x12, 100, 5000, 1024, 0x10000000ull, 0x100, 1 << 20, NULL) == ROCEKIT_ERR_ARG, "null handle");
	CHECK(rocekit_peer_new(0x11, 0x12, 100, 5000, 1024, 0x10000000ull, 0x100, 1 << 20, &a) == ROCEKIT_OK, "%s", last());
	CHECK(rocekit_peer_new(0x12, 0x11, 5000, 100, 1024, 0x20000000ull, 0x200, 1 << 20, &b) == ROCEKIT_OK, "%s", last());
	CHECK(rocekit_sb_new(0, &sb) == ROCEKIT_OK, "%s", last());
	CHECK(a > 0 && b > 0 && sb > 0 && a != b && b != sb, "handles %d %d %d", a, b, sb);
	CHECK(rocekit_peer_tick(sb, 0) == ROCEKIT_ERR_HANDLE && strstr(last(), "is a scoreboard, not a peer"), "%s", msg);
	CHECK(rocekit_sb_feed(a, frame, 62, 0, 0) == ROCEKIT_ERR_HANDLE, "peer as scoreboard");
	CHECK(rocekit_peer_option(a, "timeout", 8) == ROCEKIT_OK, "%s", last());
	CHECK(rocekit_peer_option(b, "reverse", 1) == ROCEKIT_OK, "%s", last());
	CHECK(rocekit_peer_option(b, "ack_every", 2) == ROCEKIT_OK, "%s", last());
	CHECK(rocekit_peer_option(b, "bogus", 1) == ROCEKIT_ERR_ARG && strstr(last(), "\"bogus\""), "%s", msg);
	CHECK(rocekit_peer_option(b, NULL, 1) == ROCEKIT_ERR_ARG, "null option name");
	CHECK(rocekit_peer_fault(a, "drop") == ROCEKIT_ERR_ARG, "fault without rate");
	CHECK(rocekit_peer_fault(a, "ghost-ack:0.1") == ROCEKIT_ERR_ARG, "fault a peer cannot apply");
	CHECK(rocekit_peer_fault(a, "drop:@1") == ROCEKIT_OK, "%s", last());
	CHECK(rocekit_peer_rx(a, frame, 10, 0) == ROCEKIT_ERR_FRAME, "short rx");
	CHECK(rocekit_peer_rx(a, NULL, 10, 0) == ROCEKIT_ERR_ARG, "null rx");
	CHECK(rocekit_peer_tx(a, NULL, 10, &len) == ROCEKIT_ERR_ARG, "null tx");
	CHECK(rocekit_peer_post_write(a, 1, 0x10000000ull + (1 << 20) - 10, 100, 0x20000000ull, 0x200) == ROCEKIT_ERR_ARG &&
	          strstr(last(), "outside the peer's memory region"), "%s", msg);

	/* a WRITEs 3000 bytes and READs them back from b, losing its second frame;
	 * b coalesces ACKs. */
	CHECK(rocekit_peer_post_write(a, 1, 0x10000000ull, 3000, 0x20000000ull, 0x200) == ROCEKIT_OK, "%s", last());
	CHECK(rocekit_peer_post_read(a, 2, 0x10010000ull, 3000, 0x20000000ull, 0x200) == ROCEKIT_OK, "%s", last());
	CHECK(rocekit_peer_post_send(a, 3, 0x10000000ull, 10) == ROCEKIT_OK, "%s", last());
	int64_t now = 0;
	int done = 0, ok = 0;
	for (int step = 0; step < 100000 && done < 3; step++) {
		int moved = move(a, b, sb, now, ROCEKIT_TO_DUT) + move(b, a, sb, now, ROCEKIT_FROM_DUT);
		uint64_t id;
		uint32_t status, wop, blen;
		while (rocekit_peer_poll(a, &id, &status, &wop, &blen) == ROCEKIT_OK) {
			done++;
			ok += status == 0 && blen == (id == 3 ? 10 : 3000);
		}
		int64_t next = now + 100000, wa, wb;
		if (!moved) {
			int ha = rocekit_peer_next_wake(a, &wa) == ROCEKIT_OK, hb = rocekit_peer_next_wake(b, &wb) == ROCEKIT_OK;
			if (ha && wa > next) next = wa;
			if (hb && wb > next && (!ha || wb < wa)) next = wb;
		}
		now = next;
		rocekit_peer_tick(a, now);
		rocekit_peer_tick(b, now);
	}
	CHECK(done == 3 && ok == 3, "completions %d, successful %d", done, ok);
	uint8_t back[3000];
	CHECK(rocekit_peer_mem_read(a, 0x10010000ull, back, sizeof back) == ROCEKIT_OK, "%s", last());
	int same = 1;
	for (int i = 0; i < 3000; i++)
		same &= back[i] == (uint8_t)(i + (i >> 8)); /* rocekit gen's pattern */
	CHECK(same, "READ data is a's pattern written to b and read back");
	uint64_t sent, rcvd, rej, faults, retx;
	CHECK(rocekit_peer_stats(a, &sent, &rcvd, &rej, &faults, &retx) == ROCEKIT_OK, "%s", last());
	CHECK(faults == 1 && retx > 0, "faults %llu retransmitted %llu", (unsigned long long)faults, (unsigned long long)retx);
	CHECK(rocekit_peer_tick(a, now - 1) == ROCEKIT_ERR_ARG && strstr(last(), "time never goes back"), "%s", msg);
	CHECK(rocekit_peer_option(a, "recv_wqes", 1) == ROCEKIT_ERR_STATE, "QP option after traffic");
	int32_t count = -1;
	CHECK(rocekit_sb_finish(sb, &count) == ROCEKIT_OK && count == 0, "findings %d", count);

	/* A responder that ACKs the wrong PSN is caught. */
	int32_t sb2 = 0;
	CHECK(rocekit_sb_new(1024, &sb2) == ROCEKIT_OK, "%s", last());
	for (uint32_t p = 0; p < 3; p++) {
		rocekit_build(0x0A, 0x12, p, ROCEKIT_F_ACKREQ, 0, 0, 0x1000, 1, 8, 0, payload, 8, 0, frame, sizeof frame, &len);
		CHECK(rocekit_sb_feed(sb2, frame, len, p * 1000, ROCEKIT_TO_DUT) == ROCEKIT_OK, "%s", last());
		rocekit_build(0x11, 0x11, p == 2 ? 3 : p, ROCEKIT_F_REVERSE, 0, p + 1, 0, 0, 0, 0, NULL, 0, 0, frame, sizeof frame, &len);
		CHECK(rocekit_sb_feed(sb2, frame, len, p * 1000 + 500, ROCEKIT_FROM_DUT) == ROCEKIT_OK, "%s", last());
	}
	CHECK(rocekit_sb_feed(sb2, frame, len, 0, 7) == ROCEKIT_ERR_ARG, "bad direction");
	CHECK(rocekit_sb_findings(sb2, &count) == ROCEKIT_OK && count >= 1, "findings %d", count);
	CHECK(rocekit_sb_finish(sb2, &count) == ROCEKIT_OK && count >= 1, "findings %d", count);
	int32_t fno = 0, dir = -1;
	char text[512];
	CHECK(rocekit_sb_finding(sb2, 0, &fno, &dir, text, sizeof text) == ROCEKIT_OK, "%s", last());
	CHECK(fno == 6 && dir == ROCEKIT_FROM_DUT && strncmp(text, "frame 6: \xc2\xa7" "5.3 ack_psn: ", 20) == 0,
	      "frame %d dir %d: %s", fno, dir, text);
	CHECK(strcmp(rocekit_sb_finding_text(sb2, 0), text) == 0, "finding_text");
	CHECK(rocekit_sb_finding(sb2, 99, NULL, NULL, NULL, 0) == ROCEKIT_ERR_ARG, "finding index out of range");
	CHECK(strcmp(rocekit_sb_finding_text(sb2, 99), "") == 0, "finding_text out of range");
	CHECK(rocekit_sb_feed(sb2, frame, len, 0, 0) == ROCEKIT_ERR_STATE, "feed after finish");
	CHECK(strlen(rocekit_error_string()) > 0, "error_string");

	CHECK(rocekit_free(a) == ROCEKIT_OK && rocekit_free(a) == ROCEKIT_ERR_HANDLE, "free twice");
	CHECK(rocekit_peer_tick(a, now) == ROCEKIT_ERR_HANDLE, "freed handle");
	CHECK(rocekit_free(b) == ROCEKIT_OK && rocekit_free(sb) == ROCEKIT_OK && rocekit_free(sb2) == ROCEKIT_OK, "free");

	printf("checks: %d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
