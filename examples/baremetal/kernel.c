/* SPDX-License-Identifier: MIT */
/*
 * A small x86-64 kernel whose physical page allocator is pagealloc.
 *
 * boot.S enters long mode with the first 1 GiB of physical memory mapped
 * at 0 and again at 1 GiB (the direct map). kmain() reads the multiboot
 * memory map, boots a pool whose frame N is physical page N (usable RAM is
 * memory, everything else a hole, the kernel image too), its metadata in
 * an arena inside the kernel image and its frames' bytes in the direct map
 * (backing=platform, the frames hook). It then builds page tables for a
 * virtual region out of pool pages and checks the region through them,
 * runs the shared workload (every order, folios, owned folios that
 * compaction moves, bytes checked, a contiguous range, CMA), prints
 * /proc/buddyinfo, /proc/zoneinfo and pa_validate()'s verdict on COM1,
 * and leaves through QEMU's isa-debug-exit: 0x10 passed (QEMU exits 33),
 * 0x11 failed (35).
 */
#include <pagealloc.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arena.h"
#include "workload.h"

#define COM1           0x3f8
#define DEBUG_EXIT     0xf4
#define PAGE_SIZE      4096ull
#define DIRECT_MAP     (1ull << 30) /* boot.S: physical 0..1 GiB at 1 GiB */
#define MAPPED_LIMIT   (1ull << 30) /* what boot.S maps: the pool stays below */
#define ARENA_BYTES    (8u << 20)
#define REGION_VIRT    (1ull << 39) /* PML4 slot 1: the region built from pool pages */
#define REGION_PAGES   64
#define MAX_HOLES      24
#define MB_INFO_MMAP   (1u << 6)
#define MULTIBOOT_BOOT 0x2badb002u

extern uint64_t pml4[512];
extern char kernel_start[], kernel_end[];

/* ---------------------------------------------------------------------- */
/* Ports: the serial line and the exit device                              */
/* ---------------------------------------------------------------------- */

static void outb(uint16_t port, uint8_t v)
{
	__asm__ volatile("outb %0, %1" : : "a"(v), "Nd"(port));
}

static uint8_t inb(uint16_t port)
{
	uint8_t v;
	__asm__ volatile("inb %1, %0" : "=a"(v) : "Nd"(port));
	return v;
}

static void outl(uint16_t port, uint32_t v)
{
	__asm__ volatile("outl %0, %1" : : "a"(v), "Nd"(port));
}

/* 115200 8N1, no interrupts. */
static void serial_init(void)
{
	outb(COM1 + 1, 0x00);
	outb(COM1 + 3, 0x80);
	outb(COM1 + 0, 0x01);
	outb(COM1 + 1, 0x00);
	outb(COM1 + 3, 0x03);
	outb(COM1 + 2, 0xc7);
	outb(COM1 + 4, 0x03);
}

static void serial_putc(char c)
{
	while (!(inb(COM1 + 5) & 0x20))
		;
	outb(COM1, (uint8_t)c);
}

static void put(const char *s)
{
	for (; *s; s++) {
		if (*s == '\n')
			serial_putc('\r');
		serial_putc(*s);
	}
}

static void put_hex(uint64_t v)
{
	char buf[19] = "0x";
	for (int i = 0; i < 16; i++)
		buf[2 + i] = "0123456789abcdef"[(v >> (60 - 4 * i)) & 15];
	buf[18] = '\0';
	put(buf);
}

__attribute__((noreturn)) static void leave(bool passed)
{
	put(passed ? "baremetal: passed\n" : "baremetal: FAILED\n");
	outl(DEBUG_EXIT, passed ? 0x10 : 0x11);
	for (;;)
		__asm__ volatile("cli; hlt");
}

/* ---------------------------------------------------------------------- */
/* The platform                                                            */
/* ---------------------------------------------------------------------- */

/* The pool's metadata: an arena inside the kernel image, zero as the loader left the bss. */
static _Alignas(4096) unsigned char arena_mem[ARENA_BYTES];
static struct arena arena = ARENA_OVER(arena_mem);

/* Frame N's bytes are physical page N, seen through the direct map. */
static void *k_frames(void *ctx, uint64_t bytes)
{
	(void)ctx;
	return bytes <= MAPPED_LIMIT ? (void *)DIRECT_MAP : NULL;
}

static uint64_t k_now_ns(void *ctx)
{
	(void)ctx;
	uint32_t lo, hi;
	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return (uint64_t)hi << 32 | lo; /* cycles: only the order matters to the pool */
}

static void k_report(void *ctx, const char *line)
{
	(void)ctx;
	put("pagealloc: ");
	put(line);
	put("\n");
}

/* ---------------------------------------------------------------------- */
/* The memory map, as pa_boot's command line                               */
/* ---------------------------------------------------------------------- */

struct mb_info {
	uint32_t flags, mem_lower, mem_upper, boot_device, cmdline, mods_count, mods_addr;
	uint32_t syms[4];
	uint32_t mmap_length, mmap_addr;
} __attribute__((packed));

struct mb_mmap {
	uint32_t size;
	uint64_t addr, len;
	uint32_t type; /* 1: usable RAM */
} __attribute__((packed));

struct range {
	uint64_t start, end;
};

/* Usable RAM below the mapped limit, copied out before the pool may hand its pages out. */
static struct range usable[32];
static unsigned nr_usable;

static bool read_memory_map(const struct mb_info *mbi)
{
	if (!(mbi->flags & MB_INFO_MMAP))
		return false;
	for (uint64_t at = mbi->mmap_addr; at < (uint64_t)mbi->mmap_addr + mbi->mmap_length;) {
		const struct mb_mmap *e = (const struct mb_mmap *)(uintptr_t)at;
		put("  ");
		put_hex(e->addr);
		put("-");
		put_hex(e->addr + e->len);
		put(e->type == 1 ? " usable\n" : " reserved\n");
		uint64_t end = e->addr + e->len > MAPPED_LIMIT ? MAPPED_LIMIT : e->addr + e->len;
		if (e->type == 1 && e->addr < end && nr_usable < 32)
			usable[nr_usable++] = (struct range){ e->addr, end };
		at += e->size + 4;
	}
	return nr_usable > 0;
}

static char *append(char *p, const char *s)
{
	while (*s)
		*p++ = *s++;
	*p = '\0';
	return p;
}

static char *append_u64(char *p, uint64_t v)
{
	char num[21];
	return append(p, workload_u64(num, v));
}

static char *append_hole(char *p, uint64_t start, uint64_t end)
{
	p = append(p, " memhole=");
	p = append_u64(p, start);
	p = append(p, "-");
	return append_u64(p, end);
}

/*
 * mem= the end of usable RAM (in whole 4 MiB blocks); every gap between
 * usable ranges a hole, and the kernel image (with the metadata arena in
 * it) one more: pa_boot manages exactly the RAM nobody else uses.
 */
static void boot_line(char *line)
{
	uint64_t mem = 0;
	for (unsigned i = 0; i < nr_usable; i++)
		mem = usable[i].end > mem ? usable[i].end : mem;
	mem &= ~((4ull << 20) - 1);
	char *p = append(line, "mem=");
	p = append_u64(p, mem);
	p = append(p, " nr_cpus=1 backing=platform kcompactd=manual page_reporting=manual cma=8M");
	uint64_t covered = 0;
	unsigned holes = 0;
	/* The ranges come in address order from QEMU; a gap before each is a hole. */
	for (unsigned i = 0; i < nr_usable && holes < MAX_HOLES; i++) {
		if (usable[i].start > covered && covered < mem) {
			p = append_hole(p, covered, usable[i].start < mem ? usable[i].start : mem);
			holes++;
		}
		covered = usable[i].end > covered ? usable[i].end : covered;
	}
	p = append_hole(p, (uint64_t)(uintptr_t)kernel_start, (uint64_t)(uintptr_t)kernel_end);
}

/* ---------------------------------------------------------------------- */
/* Page tables from pool pages                                             */
/* ---------------------------------------------------------------------- */

static uint64_t page_phys(struct pa_pool *pool, struct pa_page *p)
{
	return pa_page_to_pfn(pool, p) * PAGE_SIZE;
}

static uint64_t *page_table(struct pa_pool *pool, struct pa_page *p)
{
	return pa_page_address(pool, p);
}

static void reload_cr3(void)
{
	uint64_t cr3;
	__asm__ volatile("mov %%cr3, %0\n\tmov %0, %%cr3" : "=r"(cr3) : : "memory");
}

/*
 * A PDPT, a PD and a PT, each a zeroed pool page, map REGION_PAGES pool
 * pages (taken one by one, so scattered) at REGION_VIRT; a pattern written
 * through the region must read back through each page's direct-map
 * address. Then the region is unmapped and every page goes back.
 */
static bool page_tables(struct pa_pool *pool)
{
	struct pa_page *tables[3], *data[REGION_PAGES];
	for (unsigned i = 0; i < 3; i++)
		if (!(tables[i] = pa_alloc_pages(pool, PA_GFP_ZERO, 0)))
			return false;
	for (unsigned i = 0; i < REGION_PAGES; i++)
		if (!(data[i] = pa_alloc_pages(pool, PA_GFP_MOVABLE, 0)))
			return false;
	uint64_t *pdpt = page_table(pool, tables[0]), *pd = page_table(pool, tables[1]);
	uint64_t *pt = page_table(pool, tables[2]);
	pdpt[0] = page_phys(pool, tables[1]) | 3;
	pd[0] = page_phys(pool, tables[2]) | 3;
	for (unsigned i = 0; i < REGION_PAGES; i++)
		pt[i] = page_phys(pool, data[i]) | 3;
	pml4[REGION_VIRT >> 39] = page_phys(pool, tables[0]) | 3;
	reload_cr3();
	volatile uint64_t *region = (volatile uint64_t *)(uintptr_t)REGION_VIRT;
	for (unsigned i = 0; i < REGION_PAGES; i++)
		region[i * (PAGE_SIZE / 8) + i] = 0xfeed0000ull + i;
	bool ok = true;
	for (unsigned i = 0; i < REGION_PAGES; i++)
		ok &= ((uint64_t *)pa_page_address(pool, data[i]))[i] == 0xfeed0000ull + i;
	put("page tables: ");
	put_hex(REGION_VIRT);
	put(ok ? " maps 64 pool pages, checked through the direct map\n" :
	         " does not map the pool pages\n");
	pml4[REGION_VIRT >> 39] = 0;
	reload_cr3();
	for (unsigned i = 0; i < REGION_PAGES; i++)
		pa_free_pages(pool, data[i], 0);
	for (unsigned i = 0; i < 3; i++)
		pa_free_pages(pool, tables[i], 0);
	return ok;
}

/* ---------------------------------------------------------------------- */

void kmain(uint32_t magic, uint32_t info);

void kmain(uint32_t magic, uint32_t info)
{
	static const struct pa_platform plat = {
		.ctx = &arena,
		.now_ns = k_now_ns,
		.reserve = arena_reserve,
		.commit = arena_commit,
		.release = arena_release,
		.report = k_report,
		.alloc = arena_alloc,
		.free = arena_free,
		.frames = k_frames,
	};
	static char line[2048], err[256];
	serial_init();
	put("pagealloc bare-metal kernel, long mode, ");
	put_hex((uint64_t)(uintptr_t)kernel_start);
	put("-");
	put_hex((uint64_t)(uintptr_t)kernel_end);
	put("\nmultiboot memory map:\n");
	if (magic != MULTIBOOT_BOOT || !read_memory_map((const struct mb_info *)(uintptr_t)info)) {
		put("no multiboot memory map\n");
		leave(false);
	}
	boot_line(line);
	put("pa_boot: ");
	put(line);
	put("\n");
	struct pa_pool *pool;
	if (pa_boot(line, &plat, &pool, err, sizeof err) != 0) {
		put("pa_boot failed: ");
		put(err);
		put("\n");
		leave(false);
	}
	unsigned failed = !page_tables(pool);
	failed += workload_run(pool, put);
	put("/proc/buddyinfo\n");
	failed += workload_put_report(pool, PA_REPORT_BUDDYINFO, put);
	put("/proc/zoneinfo\n");
	failed += workload_put_report(pool, PA_REPORT_ZONEINFO, put);
	int rc = pa_validate(pool, err, sizeof err);
	put(rc == 0 ? "pa_validate: ok\n" : "pa_validate: FAILED: ");
	if (rc) {
		put(err);
		put("\n");
		failed++;
	}
	leave(failed == 0);
}
