#!/bin/bash
# Two GPUs on one node
export CUDA_VISIBLE_DEVICES=0,1
torchrun --nproc_per_node 2 train.py --model "$1"
