/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 */
#ifndef UROCE_PACE_H
#define UROCE_PACE_H

/**
 * @file
 * Pacing: a token bucket per QP and a timing wheel of QPs waiting for tokens.
 *
 * The bucket follows the split of DPDK's rte_meter: a profile computed once
 * when the limit is set (ibv_modify_qp_rate_limit: rate_limit in kbit/s,
 * max_burst_sz in bytes), and a runtime of two words per QP. Time is an
 * argument (TSC cycles), so the component needs no EAL and tests use a fake
 * clock. All validation happens in uroce_tb_profile_init(); the per-packet
 * calls cannot fail and do two multiplies and a few compares.
 *
 * Token unit. Tokens count 1/tsc_hz of a byte. In that unit a bucket gains
 * exactly rate_bytes_per_second tokens per cycle (125 * rate_kbps) and a
 * packet of b bytes costs exactly b * tsc_hz tokens, so the rate has no
 * rounding error at all: it is a rational number held exactly, and nothing is
 * lost between calls however often the bucket is refilled. The only rounding
 * is in uroce_tb_ready_at(), which rounds a deadline up to a whole cycle; the
 * fraction stays in the bucket and is used by the next packet, so it does not
 * add up. The unit depends only on tsc_hz, so a rate change keeps the tokens
 * as they are (O(1), no conversion).
 *
 * Ranges that keep every quantity inside int64_t (checked at profile time):
 *   tsc_hz      <= 2^36 (68 GHz)
 *   rate_kbps   <= 2^40 (refill per cycle 125 * rate_kbps < 2^47)
 *   burst bytes <= 2^61 / tsc_hz (512 MiB at 4 GHz)
 *   packet      <= UROCE_TB_MAX_BYTES (16 MiB) per call
 * so the bucket stays within [-2^60, 2^61]. Elapsed time is clamped to the
 * cycles that fill any bucket from its lowest point (profile.fill_cycles), so
 * elapsed * rate < 2^61 + 2^60 + 2^47 for any gap, including 2^40 cycles
 * or a whole 64-bit wrap.
 *
 * Packets larger than the burst. A packet is allowed when the bucket holds
 * min(bytes, burst) bytes: a packet longer than the burst goes when the
 * bucket is full and leaves it in debt (negative), which the refill pays back
 * before the next packet. So every byte is counted, nothing gets stuck, and
 * the bytes sent in any window of w cycles are at most
 * max(burst, largest packet) + rate * w.
 *
 * Time. Differences are taken modulo 2^64 and read as signed: a time before
 * the bucket's last update (a clock that steps back) counts as no time
 * passed and the bucket keeps its own, later time, so it never credits the
 * same interval twice; the TSC wrapping through zero is an ordinary step.
 *
 * The wheel: see uroce_wheel_init(). The ready lists: see uroce_sched_init().
 */

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------------
 * Token bucket.
 */

#define UROCE_TB_HZ_MAX		(UINT64_C(1) << 36)
#define UROCE_TB_RATE_MAX_KBPS	(UINT64_C(1) << 40)
#define UROCE_TB_CAP_MAX	(UINT64_C(1) << 61)	/* burst * tsc_hz */
/** Largest charge per packet; larger values are charged as this many bytes.
 * A RoCEv2 packet is at most 4096 bytes of payload plus headers. */
#define UROCE_TB_MAX_BYTES	(UINT32_C(1) << 24)

/** What a rate limit means in the token unit; shared by the QPs that use it. */
struct uroce_tb_profile {
	uint64_t tsc_hz;	/**< tokens per byte */
	uint64_t refill;	/**< tokens per cycle = bytes per second */
	int64_t cap;		/**< burst in tokens: burst_bytes * tsc_hz */
	uint64_t fill_cycles;	/**< any bucket is full after this many cycles */
	uint64_t rate_kbps;
	uint32_t burst_bytes;
	/** What a user out of tokens gathers before it sends again, set by
	 * the user (the QPs: lib/transport/qp_pace.c); 0 from
	 * uroce_tb_profile_init(). The bucket never looks at it. */
	uint32_t batch_bytes;
};

/** Per-QP state. */
struct uroce_tb {
	int64_t tokens;		/**< in 1/tsc_hz byte; negative = debt */
	uint64_t time;		/**< TSC of the last refill */
};

/**
 * Compute a profile. On error *p is left as it was.
 *
 * @return 0, or -EINVAL if a value is 0 or outside the ranges above.
 */
int uroce_tb_profile_init(struct uroce_tb_profile *p, uint64_t tsc_hz,
			  uint64_t rate_kbps, uint32_t burst_bytes);

/** Start a bucket full at time now. */
void uroce_tb_init(struct uroce_tb *tb, const struct uroce_tb_profile *p,
		   uint64_t now);

/**
 * Refill up to now, then take bytes if the bucket holds min(bytes, burst).
 * @return true if the packet may go (and has been charged).
 */
bool uroce_tb_consume(struct uroce_tb *tb, const struct uroce_tb_profile *p,
		      uint64_t now, uint32_t bytes);

/**
 * The earliest time at or after now at which uroce_tb_consume(bytes) would
 * succeed if nothing else happens to the bucket: consume at the returned
 * time succeeds and at one cycle before it fails (unless the result is now).
 * Does not change the bucket.
 */
uint64_t uroce_tb_ready_at(const struct uroce_tb *tb,
			   const struct uroce_tb_profile *p, uint64_t now,
			   uint32_t bytes);

/**
 * Change the rate in O(1): tokens earned at the old rate up to now are kept,
 * capped at the new burst; debt is kept. If the two profiles have different
 * tsc_hz the tokens are converted, rounding down to whole bytes.
 */
void uroce_tb_set_profile(struct uroce_tb *tb,
			  const struct uroce_tb_profile *old_p,
			  const struct uroce_tb_profile *new_p, uint64_t now);

/**
 * Packets of bytes (in total) taken by uroce_tb_consume() at an earlier
 * time left only at now (they were handed to the port then). Refill up to
 * now and keep no more than a bucket that took them at now would hold:
 * cap - bytes. Without it the refill between the two times, capped at the
 * burst, would let a full burst follow them at once and the wire would
 * show bytes more than the burst. In steady state the bucket is far below
 * that and nothing changes; the rate is never raised.
 * @return the tokens it drops, in whole bytes (rounded down): those the
 * refill brings beyond the burst (uroce_tb_excess()) and those beyond
 * cap - bytes.
 */
uint64_t uroce_tb_handoff(struct uroce_tb *tb,
			  const struct uroce_tb_profile *p, uint64_t now,
			  uint64_t bytes);

/**
 * A user that had nothing to send since the bucket's last update resumes
 * at now: the refill of that pause fills the bucket only up to floor
 * bytes (at most the burst), or up to what it held at that update if
 * that is more; debt is paid back as usual. So a pause adds no more than
 * floor to what the user was owed, and takes none of it.
 * @return the tokens it drops, in whole bytes (rounded down), as
 * uroce_tb_handoff().
 */
uint64_t uroce_tb_resume(struct uroce_tb *tb, const struct uroce_tb_profile *p,
			 uint64_t now, uint32_t floor);

/** Whole bytes in the bucket at now (rounded down; negative = debt). */
int64_t uroce_tb_tokens(const struct uroce_tb *tb,
			const struct uroce_tb_profile *p, uint64_t now);

/**
 * Whole bytes (rounded down) of tokens that a refill up to now drops at
 * the burst: what came in beyond a full bucket. Does not change the bucket.
 * For a user that had packets waiting all the while, they are rate lost to
 * serving it late. Saturates at UINT64_MAX.
 */
uint64_t uroce_tb_excess(const struct uroce_tb *tb,
			 const struct uroce_tb_profile *p, uint64_t now);

/* ---------------------------------------------------------------------------
 * Timing wheel.
 *
 * Entries are keyed by a TSC deadline. Time is cut in slots of 2^slot_shift
 * cycles; a deadline is rounded up to the start of a slot, and a slot is due
 * when now reaches its start, so an entry never leaves before its deadline
 * and at most 2^slot_shift - 1 cycles after it. A deadline already passed
 * goes into the current slot.
 *
 * Three levels, each aligned to its own span (n = nslots):
 *   level 1  n slots: the block of n slots that holds the cursor;
 *   level 2  n lists, one per block of the lap of n*n slots holding the cursor,
 *            and n head lists: the entries due at each block's first slot;
 *   overflow one list for later laps.
 * When the cursor enters a block, that block's level-2 list moves down to
 * level 1 and its head list serves as level 1's first slot, where it is;
 * when the cursor enters a lap, the overflow list is sorted into levels 1
 * and 2. Since an entry is filed at the lowest level its deadline allows and
 * lists move down whole, before anything else can be filed next to them,
 * every list stays in arrival order: entries that share a slot leave in the
 * order they were added (FIFO), and slots leave in time order.
 *
 * Entries due at a block's first slot are never moved: filing one and
 * taking it out are all it costs. uroce_wheel_add_range() files there what
 * may leave at any time in a range that holds a block's start: with
 * 10,000 slow paced QPs, whose wake-ups 20 ms ahead land in level 2, each
 * move down a level would be a cache miss on a cold entry, and
 * the QPs that wake up together share the engine's transmit batches.
 *
 * Cost: add and del are O(1). An entry moves down at most twice; while it
 * waits in the overflow list it is looked at once per lap. expire() finds the next occupied
 * slot with an occupancy bitmap of two levels (a summary word over n/64
 * words), so a stretch of empty slots costs O(1) however long it is; when
 * the whole wheel is empty the cursor jumps to now.
 *
 * Memory: uroce_wheel_init() allocates the lists and bitmaps with malloc();
 * uroce_wheel_fini() frees them. Entries are intrusive: the caller embeds a
 * struct uroce_wheel_entry in its own object (e.g. the QP) and gets it back
 * with container_of().
 */

#define UROCE_WHEEL_SLOTS_MIN	64
#define UROCE_WHEEL_SLOTS_MAX	4096
#define UROCE_WHEEL_SHIFT_MAX	32
#define UROCE_WHEEL_UNARMED	UINT32_MAX

struct uroce_wheel_link {
	struct uroce_wheel_link *next;
	struct uroce_wheel_link *prev;
};

/** Embed one in each object that waits; init it once before first use. */
struct uroce_wheel_entry {
	struct uroce_wheel_link link;
	uint64_t deadline;	/**< as given to uroce_wheel_add(), or the time
				 *   uroce_wheel_add_range() chose */
	uint32_t list;		/**< list holding it, or UROCE_WHEEL_UNARMED */
};

struct uroce_wheel {
	uint64_t cur;		/**< cursor: absolute slot; slots before are empty */
	uint64_t ovf_min;	/**< lowest slot in the overflow list, or lower */
	uint32_t count;		/**< entries armed */
	uint8_t slot_shift;
	uint8_t order;		/**< log2(nslots) */
	struct uroce_wheel_link *lists;	/**< level 1, level 2, overflow */
	uint64_t *bits;		/**< occupancy of level 1, then of level 2 */
	uint64_t summary[2];	/**< bit w: word w of that level's bits != 0 */
	uint64_t visits;	/**< steps taken by expire (cost tests) */
};

/**
 * @param slot_shift  slot length is 2^slot_shift cycles, <= 32.
 * @param nslots_pow2 slots per level, a power of 2 in [64, 4096].
 * @param now         the cursor starts at the slot holding now.
 * @return 0, -EINVAL for bad sizes, -ENOMEM.
 */
int uroce_wheel_init(struct uroce_wheel *w, unsigned int slot_shift,
		     unsigned int nslots_pow2, uint64_t now);

/** Free the memory of a wheel. Entries still in it keep a stale list
 * number: uroce_wheel_entry_init() them before using them again. */
void uroce_wheel_fini(struct uroce_wheel *w);

/** Mark an entry as not in any wheel. */
static inline void
uroce_wheel_entry_init(struct uroce_wheel_entry *e)
{
	e->list = UROCE_WHEEL_UNARMED;
}

static inline bool
uroce_wheel_armed(const struct uroce_wheel_entry *e)
{
	return e->list != UROCE_WHEEL_UNARMED;
}

/** Arm e for deadline; an armed entry is moved (re-armed). O(1). */
void uroce_wheel_add(struct uroce_wheel *w, struct uroce_wheel_entry *e,
		     uint64_t deadline);

/**
 * Arm e for any time from deadline to latest: the first start of a block
 * (2^slot_shift * nslots cycles, aligned) in that range if there is one,
 * else deadline (as uroce_wheel_add(); also when deadline's slot is due
 * already). e->deadline is the time chosen. O(1).
 */
void uroce_wheel_add_range(struct uroce_wheel *w, struct uroce_wheel_entry *e,
			   uint64_t deadline, uint64_t latest);

/** Disarm e. O(1). @return 0, or -ENOENT if e was not armed. */
int uroce_wheel_del(struct uroce_wheel *w, struct uroce_wheel_entry *e);

/**
 * Take up to max entries whose slot is due at now, earliest slot first and
 * in arrival order within a slot; they come back disarmed. Entries left over
 * when max is reached come first on the next call.
 * @return the number of entries stored in out.
 */
unsigned int uroce_wheel_expire(struct uroce_wheel *w, uint64_t now,
				struct uroce_wheel_entry **out,
				unsigned int max);

/**
 * A time at or before the earliest armed deadline's slot (UINT64_MAX when
 * nothing is armed): exact when that slot is in the cursor's block, else
 * the start of the next block. O(1); for an idle loop that must not sleep
 * past its next timer.
 */
uint64_t uroce_wheel_next_due(const struct uroce_wheel *w);

static inline uint32_t
uroce_wheel_count(const struct uroce_wheel *w)
{
	return w->count;
}

/** Cycles of a block: what uroce_wheel_add_range() may round up by. */
static inline uint64_t
uroce_wheel_block_cycles(const struct uroce_wheel *w)
{
	return UINT64_C(1) << (w->slot_shift + w->order);
}

/* ---------------------------------------------------------------------------
 * Ready lists: the QPs that have frames to build, served round robin.
 *
 * One FIFO list per output (an engine port, plus one list for QPs that
 * build no frame, e.g. in ERR flushing their WQEs). An output that cannot
 * take frames now (busy: its tx queue stalls) keeps its entries where they
 * are and costs nothing: uroce_sched_next() skips the whole list by one
 * bit test, so a stall with 10,000 ready QPs does not walk them. Outputs
 * take turns, one entry each, so a busy QP set on one port never delays
 * another port's; within an output entries leave in the order they were
 * added, and an entry the caller adds again (it has more to send) goes to
 * the tail: QPs with work share the transmit budget evenly.
 *
 * add/del/next are O(1) (next: a bit scan over at most
 * UROCE_SCHED_MAX_LISTS outputs). Entries are intrusive, as the wheel's.
 * Single-threaded: the owner lcore only.
 */

#define UROCE_SCHED_MAX_LISTS	32

struct uroce_sched_entry {
	struct uroce_wheel_link link;
	uint8_t list;		/**< output, set by uroce_sched_entry_init() */
	bool queued;
};

struct uroce_sched {
	struct uroce_wheel_link head[UROCE_SCHED_MAX_LISTS];
	uint32_t nonempty;	/**< bit l: list l holds entries */
	uint32_t count;		/**< entries queued */
	uint32_t nlists;
	uint32_t turn;		/**< the list whose turn is next */
};

/** @return 0, or -EINVAL unless 1 <= nlists <= UROCE_SCHED_MAX_LISTS. */
int uroce_sched_init(struct uroce_sched *s, unsigned int nlists);

/** Before first use, and to move an entry that is not queued to another
 * output. */
static inline void
uroce_sched_entry_init(struct uroce_sched_entry *e, unsigned int list)
{
	e->list = (uint8_t)list;
	e->queued = false;
}

/** Append e to its output's list; nothing if it is queued already.
 * @return true if it was added. */
bool uroce_sched_add(struct uroce_sched *s, struct uroce_sched_entry *e);

/** Take e off its list. @return 0, or -ENOENT if it was not queued. */
int uroce_sched_del(struct uroce_sched *s, struct uroce_sched_entry *e);

/**
 * Take the head of the next output in turn whose bit is clear in busy
 * (bit l: list l cannot take frames now), and pass the turn to the output
 * after it. @return the entry (no longer queued), or NULL when every list
 * that holds entries is busy.
 */
struct uroce_sched_entry *uroce_sched_next(struct uroce_sched *s,
					   uint32_t busy);

static inline uint32_t
uroce_sched_count(const struct uroce_sched *s)
{
	return s->count;
}

#ifdef __cplusplus
}
#endif

#endif /* UROCE_PACE_H */
