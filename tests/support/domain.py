"""Hand-written, realistic tool outputs that reporters paste into issues (shared by domain tests)."""

DS_REPORT = """\
[2023-08-01 10:12:33,512] [INFO] [real_accelerator.py:110:get_accelerator] Setting ds_accelerator to cuda (auto detect)
--------------------------------------------------
DeepSpeed C++/CUDA extension op report
--------------------------------------------------
NOTE: Ops not installed will be just-in-time (JIT) compiled at
      runtime if needed. Op compatibility means that your system
      meet the required dependencies to JIT install the op.
--------------------------------------------------
JIT compiled ops requires ninja
ninja .................. [OKAY]
--------------------------------------------------
op name ................ installed .. compatible
--------------------------------------------------
async_io ............... [NO] ....... [NO]
fused_adam ............. [NO] ....... [OKAY]
cpu_adam ............... [NO] ....... [OKAY]
cpu_adagrad ............ [NO] ....... [OKAY]
fused_lamb ............. [NO] ....... [OKAY]
quantizer .............. [NO] ....... [OKAY]
random_ltd ............. [NO] ....... [OKAY]
 [WARNING]  sparse_attn requires a torch version >= 1.5 and < 2.0 but detected 2.0
 [WARNING]  using untested triton version (2.0.0), only 1.0.0 is known to be compatible
sparse_attn ............ [NO] ....... [NO]
spatial_inference ...... [NO] ....... [OKAY]
transformer ............ [NO] ....... [OKAY]
stochastic_transformer . [NO] ....... [OKAY]
transformer_inference .. [NO] ....... [OKAY]
 [WARNING]  async_io requires the dev libaio .so object and headers but these were not found.
 [WARNING]  async_io: please install the libaio-dev package with apt
--------------------------------------------------
DeepSpeed general environment info:
torch install path ............... ['/opt/conda/envs/train/lib/python3.10/site-packages/torch']
torch version .................... 2.0.1+cu117
deepspeed install path ........... ['/opt/conda/envs/train/lib/python3.10/site-packages/deepspeed']
deepspeed info ................... 0.10.0, unknown, unknown
torch cuda version ............... 11.7
torch hip version ................ None
nvcc version ..................... 12.1
deepspeed wheel compiled w. ...... torch 2.0, cuda 11.7
shared memory (/dev/shm) size .... 31.39 GB
"""

COLLECT_ENV = """\
Collecting environment information...
PyTorch version: 2.1.0+cu121
Is debug build: False
CUDA used to build PyTorch: 12.1
ROCM used to build PyTorch: N/A

OS: Ubuntu 22.04.3 LTS (x86_64)
GCC version: (Ubuntu 11.4.0-1ubuntu1~22.04) 11.4.0
Clang version: Could not collect
CMake version: version 3.27.7
Libc version: glibc-2.35

Python version: 3.10.12 (main, Jun 11 2023, 05:26:28) [GCC 11.4.0] (64-bit runtime)
Python platform: Linux-5.15.0-88-generic-x86_64-with-glibc2.35
Is CUDA available: True
CUDA runtime version: 12.1.105
CUDA_MODULE_LOADING set to: LAZY
GPU models and configuration:
GPU 0: NVIDIA A100-SXM4-80GB
GPU 1: NVIDIA A100-SXM4-80GB
GPU 2: NVIDIA A100-SXM4-80GB
GPU 3: NVIDIA A100-SXM4-80GB

Nvidia driver version: 535.104.05
cuDNN version: Probably one of the following:
/usr/lib/x86_64-linux-gnu/libcudnn.so.8.9.0
HIP runtime version: N/A
MIOpen runtime version: N/A
Is XNNPACK available: True

CPU:
Architecture:                       x86_64
Model name:                         AMD EPYC 7742 64-Core Processor

Versions of relevant libraries:
[pip3] numpy==1.24.4
[pip3] torch==2.1.0
[pip3] torchvision==0.16.0
[pip3] triton==2.1.0
[conda] numpy                     1.24.4                   pypi_0    pypi
[conda] torch                     2.1.0                    pypi_0    pypi
"""

PIP_LIST = """\
Package                  Version
------------------------ ------------
accelerate               0.21.0
colossalai               0.3.1
datasets                 2.14.4
ninja                    1.11.1
numpy                    1.24.4
nvidia-nccl-cu11         2.14.3
torch                    1.13.1+cu117
torchvision              0.14.1+cu117
transformers             4.31.0
"""

PIP_FREEZE = """\
accelerate==0.25.0
deepspeed==0.9.2
megatron-core==0.5.0
safetensors==0.4.1
torch==2.1.2
transformers==4.36.2
"""

NVIDIA_SMI = """\
Tue Oct 10 12:01:55 2023
+---------------------------------------------------------------------------------------+
| NVIDIA-SMI 535.104.05             Driver Version: 535.104.05   CUDA Version: 12.2     |
|-----------------------------------------+----------------------+----------------------+
| GPU  Name                 Persistence-M | Bus-Id        Disp.A | Volatile Uncorr. ECC |
| Fan  Temp   Perf          Pwr:Usage/Cap |         Memory-Usage | GPU-Util  Compute M. |
|=========================================+======================+======================|
|   0  NVIDIA H100 80GB HBM3          On  | 00000000:18:00.0 Off |                    0 |
| N/A   31C    P0              70W / 700W |      4MiB / 81559MiB |      0%      Default |
+-----------------------------------------+----------------------+----------------------+
|   1  NVIDIA H100 80GB HBM3          On  | 00000000:2A:00.0 Off |                    0 |
| N/A   33C    P0              71W / 700W |      4MiB / 81559MiB |      0%      Default |
+-----------------------------------------+----------------------+----------------------+
|   2  NVIDIA H100 80GB HBM3          On  | 00000000:3A:00.0 Off |                    0 |
| N/A   30C    P0              69W / 700W |      4MiB / 81559MiB |      0%      Default |
+-----------------------------------------+----------------------+----------------------+
|   3  NVIDIA H100 80GB HBM3          On  | 00000000:5D:00.0 Off |                    0 |
| N/A   29C    P0              70W / 700W |      4MiB / 81559MiB |      0%      Default |
+-----------------------------------------+----------------------+----------------------+

+---------------------------------------------------------------------------------------+
| Processes:                                                                            |
|  GPU   GI   CI        PID   Type   Process name                            GPU Memory |
|=======================================================================================|
|    0   N/A  N/A     12345      C   python                                    4MiB     |
+---------------------------------------------------------------------------------------+
"""

NVCC = """\
$ nvcc --version
nvcc: NVIDIA (R) Cuda compiler driver
Copyright (c) 2005-2022 NVIDIA Corporation
Built on Wed_Sep_21_10:33:58_PDT_2022
Cuda compilation tools, release 11.8, V11.8.89
Build cuda_11.8.r11.8/compiler.31833905_0
"""

BUILD_FAILURE = """\
[BUG] pip install deepspeed fails building fused_adam
When I run `DS_BUILD_OPS=1 pip install deepspeed` the build stops:
```
  building 'deepspeed.ops.adam.fused_adam_op' extension
  /usr/local/cuda/bin/nvcc -I/opt/conda/lib/python3.10/site-packages/torch/include -c csrc/adam/multi_tensor_adam.cu
  csrc/adam/multi_tensor_apply.cuh(12): error: identifier "__half" is undefined
  error: command '/usr/local/cuda/bin/nvcc' failed with exit code 1
  ERROR: Failed building wheel for deepspeed
```
torch 2.0.1+cu117, nvcc 12.1, Ubuntu 20.04.
"""

NCCL_SETUP = """\
Multi-node launch fails with connection refused
I launch on 2 nodes with 8 A100 each: `deepspeed --hostfile hostfile --master_addr 10.0.0.1 train.py --deepspeed ds_config.json`
```
worker-1: RuntimeError: [c10d] The client socket has failed to connect to [10.0.0.1]:29500 (errno: 111 - Connection refused).
worker-1: torch.distributed.DistNetworkError: Connection refused
```
"""  # noqa: E501 - log lines kept verbatim, as users paste them

NCCL_TRAINING = """\
NCCL timeout after 2000 iterations
Training runs fine for 2000 iterations and then:
```
[E ProcessGroupNCCL.cpp:475] [Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=48211, OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 1800412 milliseconds before timing out.
```
I use torchrun --nproc_per_node 8 pretrain_gpt.py with tensor-model-parallel-size 2.
"""  # noqa: E501 - log lines kept verbatim, as users paste them

OOM_TRAINING = """\
CUDA OOM with ZeRO-3 at step 10
Training llama with zero stage 3 and offload_optimizer to cpu, loss goes fine for some steps then
torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 79.35 GiB total capacity)
"""

OOM_INFERENCE = """\
OOM in init_inference with kernel_inject
model = deepspeed.init_inference(model, mp_size=2, dtype=torch.half, replace_with_kernel_inject=True)
outputs = model.generate(**inputs, max_new_tokens=100)
RuntimeError: CUDA out of memory. Tried to allocate 1.50 GiB
"""
