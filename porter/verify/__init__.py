"""`porter verify`: prove a ported tree runs, under the emulated vendor package (torch_mlu, torch_npu)."""
