/* SPDX-License-Identifier: MIT */
/*
 * The kernel's entry: a multiboot (version 1) header, which QEMU's -kernel
 * loads, then the way from 32-bit protected mode into long mode: page
 * tables that map the first 1 GiB of physical memory twice with 2 MiB
 * pages (at 0, where the kernel runs, and at 1 GiB, the direct map where
 * the pool finds the frames' bytes), PAE, EFER.LME, paging, a 64-bit GDT,
 * SSE on (the compiler uses it), a stack, and kmain(magic, info).
 */
	.set MB_MAGIC, 0x1badb002
	.set MB_FLAGS, 0x00000002 /* a memory map, please */
	.set DIRECT_MAP_PDPT, 1   /* PDPT slot of the direct map: 1 GiB */

	.section .multiboot, "a"
	.balign 4
	.long MB_MAGIC, MB_FLAGS, -(MB_MAGIC + MB_FLAGS)

	.section .bss
	.balign 4096
	.globl pml4
pml4:	.skip 4096
pdpt:	.skip 4096
pd:	.skip 4096
	.balign 16
stack:	.skip 65536
stack_top:

	.section .data
	.balign 8
gdt64:
	.quad 0
	.quad 0x00af9a000000ffff /* 0x08: 64-bit code */
	.quad 0x00cf92000000ffff /* 0x10: data */
gdt64_ptr:
	.word gdt64_ptr - gdt64 - 1
	.quad gdt64
mb_magic: .long 0
mb_info:  .long 0

	.section .text
	.code32
	.globl _start32
_start32:
	cli
	movl %eax, mb_magic
	movl %ebx, mb_info
	movl $stack_top, %esp

	/* PML4[0] -> PDPT; PDPT[0] and PDPT[1] -> one PD of 512 2 MiB pages. */
	movl $pdpt, %eax
	orl $3, %eax
	movl %eax, pml4
	movl $pd, %eax
	orl $3, %eax
	movl %eax, pdpt
	movl %eax, pdpt + 8 * DIRECT_MAP_PDPT
	xorl %ecx, %ecx
1:	movl %ecx, %eax
	shll $21, %eax
	orl $0x83, %eax /* present, writable, 2 MiB */
	movl %eax, pd(, %ecx, 8)
	incl %ecx
	cmpl $512, %ecx
	jne 1b

	movl $pml4, %eax
	movl %eax, %cr3
	movl %cr4, %eax
	orl $((1 << 5) | (1 << 9) | (1 << 10)), %eax /* PAE, OSFXSR, OSXMMEXCPT */
	movl %eax, %cr4
	movl $0xc0000080, %ecx /* EFER */
	rdmsr
	orl $(1 << 8), %eax /* LME */
	wrmsr
	movl %cr0, %eax
	andl $0xfffffffb, %eax /* no x87 emulation */
	orl $0x80000003, %eax  /* paging, monitor coprocessor, protected mode */
	movl %eax, %cr0
	lgdt gdt64_ptr
	ljmp $0x08, $start64

	.code64
start64:
	movw $0x10, %ax
	movw %ax, %ds
	movw %ax, %es
	movw %ax, %ss
	movw %ax, %fs
	movw %ax, %gs
	movq $stack_top, %rsp
	movl mb_magic, %edi
	movl mb_info, %esi
	call kmain
2:	cli
	hlt
	jmp 2b

	.section .note.GNU-stack, "", @progbits
