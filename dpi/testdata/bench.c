/* bench.c: frames per second through librocekit's C ABI, as a bench calls
 * it per frame on the device's port: rocekit_peer_tx, rocekit_parse,
 * rocekit_sb_feed and rocekit_peer_rx, with rocekit_peer_poll and
 * rocekit_peer_tick per step. Peer a WRITEs 1024 bytes at a time to peer b,
 * which ACKs every packet. Usage: bench FRAMES; prints
 * "frames=N ns=T findings=F", T the time of the loop alone. */
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "rocekit.h"

static uint8_t buf[9216];
static int32_t sb;
static int64_t now;

static void die(const char* what) {
	char msg[512];
	rocekit_last_error(msg, sizeof msg);
	fprintf(stderr, "%s: %s\n", what, msg);
	exit(1);
}

/* move carries one frame, if one is due, and reports whether it did. */
static int move(int32_t from, int32_t to, int32_t dir) {
	int32_t n;
	uint32_t op, psn, icrc_ok;
	if (rocekit_peer_tx(from, buf, sizeof buf, &n) != ROCEKIT_OK)
		return 0;
	if (rocekit_parse(buf, n, &op, NULL, &psn, NULL, NULL, NULL, NULL, NULL, NULL, NULL, &icrc_ok) != ROCEKIT_OK)
		die("parse");
	if (rocekit_sb_feed(sb, buf, n, now, dir) != ROCEKIT_OK)
		die("sb_feed");
	if (rocekit_peer_rx(to, buf, n, now) != ROCEKIT_OK)
		die("peer_rx");
	return 1;
}

int main(int argc, char** argv) {
	long frames = argc > 1 ? atol(argv[1]) : 100000;
	int32_t a, b;
	if (rocekit_peer_new(0x11, 0x12, 0, 0, 1024, 0x10000000ull, 0x100, 1 << 20, &a) ||
	    rocekit_peer_new(0x12, 0x11, 0, 0, 1024, 0x20000000ull, 0x200, 1 << 20, &b) ||
	    rocekit_peer_option(b, "reverse", 1) || rocekit_sb_new(1024, &sb))
		die("setup");
	uint64_t posted = 0, done = 0, id;
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (long i = 0; i < frames;) {
		while (posted - done < 8) {
			uint64_t off = posted % 64 * 1024;
			if (rocekit_peer_post_write(a, posted, 0x10000000ull + off, 1024, 0x20000000ull + off, 0x200))
				die("post");
			posted++;
		}
		i += move(a, b, ROCEKIT_TO_DUT);
		if (i < frames)
			i += move(b, a, ROCEKIT_FROM_DUT);
		while (rocekit_peer_poll(a, &id, NULL, NULL, NULL) == ROCEKIT_OK)
			done++;
		now += 100000;
		if (rocekit_peer_tick(a, now) || rocekit_peer_tick(b, now))
			die("tick");
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	int32_t findings = -1;
	rocekit_sb_findings(sb, &findings);
	long long ns = (long long)(t1.tv_sec - t0.tv_sec) * 1000000000LL + (t1.tv_nsec - t0.tv_nsec);
	printf("frames=%ld ns=%lld findings=%d\n", frames, ns, findings);
	return findings != 0;
}
