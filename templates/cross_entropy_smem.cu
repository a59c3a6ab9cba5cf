// Template cross_entropy_smem: the cross-entropy loss and gradient with
// one CTA a row, the row staged in dynamic shared memory by the first pass
// (templates/cross_entropy_two_pass.cuh) so that the logits are read from
// global memory once and the gradient written from shared memory: 1 read
// + 1 write an element at vocabularies past what registers hold.
// Regime: V from about 16K up to what shared memory holds (227 KB a CTA on
// the H100/H200: 58K f32, 116K f16/bf16 logits), and up to twice that with
// the rest of the row read twice (bf16 128256, 151936).
//
// Parameters (macros set by the generator):
//   THREADS     threads per CTA (a multiple of 32)
//   VEC         elements per vector access (VEC * element size <= 16 B)
//   UNROLL      vectors a thread loads per loop step (loads in flight)
//   PERSISTENT  0: one row per CTA; 1: occupancy-sized grid that loops
//
// Dynamic shared memory: ceil(V / VEC) vectors, or what a CTA has (the
// launch's: the columns past what it holds are read from global memory
// twice).
#define STAGE_ROW 1
#include "cross_entropy_two_pass.cuh"
