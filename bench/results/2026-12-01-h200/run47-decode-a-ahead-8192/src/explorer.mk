ROOT ?= ../../../../..
CUDA ?= $(ROOT)/.cuda/site/nvidia/cu13
NVCC ?= $(CUDA)/bin/nvcc
# The explorer of runs 47-52: run45's harness main.cu and run46's register kernels (PIPE 3:
# A ahead of the weights), built there by their Makefiles; run16's common headers. The
# including Makefile, in a sibling run's src/, names its variant list V.
R16 = ../../../2026-11-30-h200/run16-decode-explore/src
R33 = ../../run33-decode-pdl/src
R45 = ../../run45-decode-nn-stream/src
R46 = ../../run46-decode-a-ahead/src
ARCH = -gencode arch=compute_90,code=sm_90
FLAGS = -O3 -std=c++17 $(ARCH) -I$(ROOT)/cuda/include -I. -I$(R33) -I$(R16) --expt-relaxed-constexpr -Xptxas -v
HDRS = $(R16)/common.h $(R16)/dec_common.cuh dec_reg.cuh
OBJS = main.o t_b.o t_h.o
explore: $(OBJS)
	$(NVCC) $(ARCH) -L$(CUDA)/lib -o $@ $(OBJS) -ldl -lpthread -lrt
$(R45)/main.cu:
	$(MAKE) -C $(R45) main.cu
$(R46)/dec_reg.cuh:
	$(MAKE) -C $(R46) dec_reg.cuh
main.cu: $(R45)/main.cu
	cp $(R45)/main.cu $@
dec_reg.cuh: $(R46)/dec_reg.cuh
	cp $(R46)/dec_reg.cuh $@
t_b.o: $(V) $(HDRS)
	$(NVCC) $(FLAGS) -DDT=0 -c $< -o $@ 2> t_b.ptxas.log || (cat t_b.ptxas.log; exit 1)
t_h.o: $(V) $(HDRS)
	$(NVCC) $(FLAGS) -DDT=1 -c $< -o $@ 2> t_h.ptxas.log || (cat t_h.ptxas.log; exit 1)
main.o: main.cu $(HDRS)
	$(NVCC) $(FLAGS) -c $< -o $@ 2> main.ptxas.log || (cat main.ptxas.log; exit 1)
