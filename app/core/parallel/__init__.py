"""Devices and the device mesh: simulated host devices (``devices``), tensor-parallel sharding (``mesh``)."""
