ROOT ?= ../../../../..
CUDA ?= $(ROOT)/.cuda/site/nvidia/cu13
NVCC ?= $(CUDA)/bin/nvcc
# run33's harness main.cu (patched there by its Makefile) with run40's main.patch (MS: the M
# values of the decode mode), and the including run's mma.sync tiles (its variant list V) through
# run40's skinny.cuh; run16's common headers. Included by run41's and run53's Makefiles.
R16 = ../../../2026-11-30-h200/run16-decode-explore/src
R33 = ../../run33-decode-pdl/src
R40 = ../../run40-skinny-mma/src
ARCH = -gencode arch=compute_90,code=sm_90
FLAGS = -O3 -std=c++17 $(ARCH) -I$(ROOT)/cuda/include -I. -I$(R40) -I$(R16) --expt-relaxed-constexpr -Xptxas -v
HDRS = $(R16)/common.h
VHDRS = $(HDRS) $(R40)/skinny.cuh
OBJS = main.o m_b.o m_h.o
explore: $(OBJS)
	$(NVCC) $(ARCH) -L$(CUDA)/lib -o $@ $(OBJS) -ldl -lpthread -lrt
$(R33)/main.cu:
	$(MAKE) -C $(R33) dec_reg.cuh main.cu
main.cu: $(R33)/main.cu $(R40)/main.patch
	patch -s -o $@ $(R33)/main.cu $(R40)/main.patch
m_b.o: $(V) $(VHDRS)
	$(NVCC) $(FLAGS) -DDT=0 -c $< -o $@ 2> m_b.ptxas.log || (cat m_b.ptxas.log; exit 1)
m_h.o: $(V) $(VHDRS)
	$(NVCC) $(FLAGS) -DDT=1 -c $< -o $@ 2> m_h.ptxas.log || (cat m_h.ptxas.log; exit 1)
main.o: main.cu $(HDRS)
	$(NVCC) $(FLAGS) -c $< -o $@ 2> main.ptxas.log || (cat main.ptxas.log; exit 1)
