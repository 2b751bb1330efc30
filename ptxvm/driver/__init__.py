"""Runtime API: modules, kernels, launches and device memory."""

from .api import Device, DeviceArray, Kernel, Module, Param, default_device, to_device  # noqa: F401
