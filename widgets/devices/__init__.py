"""Devices and partitioning: the device and mesh panel, the collectives XLA inserted."""
