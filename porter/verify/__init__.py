"""`porter verify`: prove a ported tree runs, under the emulated torch_mlu."""
