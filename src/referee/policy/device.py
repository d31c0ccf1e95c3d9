"""Where a model runs, decided in one place: :func:`pick_device`.

The rule (``auto``, the default of ``referee train --device`` and ``referee eval --device``):

* CUDA when torch sees a GPU, in ``bfloat16`` where the GPU supports it
  (``torch.cuda.is_bf16_supported()``: Ampere and later) and ``float16`` on older ones;
* the CPU otherwise, in ``float32``, with one torch thread (:attr:`Device.threads`: on a small
  shared CPU more threads made steps 10-30 times slower here).

``cpu`` forces the CPU; ``cuda`` (or ``cuda:N``) asks for a GPU and is a
:class:`~referee.errors.ConfigError` (exit 2) where there is none, instead of a silent CPU run.
Training keeps float32 master weights and lets the trainer autocast (:attr:`Device.bf16`,
:attr:`Device.fp16`); inference loads the weights in :attr:`Device.dtype`.

>>> d = pick_device("cpu")
>>> d.device, str(d.dtype), d.threads, d.bf16, d.use_cpu
('cpu', 'torch.float32', 1, False, True)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from referee.errors import ConfigError
from referee.optional import require_extra

if TYPE_CHECKING:
    import torch

__all__ = ["DEVICE_CHOICES", "Device", "pick_device"]

#: What ``--device`` accepts (``cuda:N`` too).
DEVICE_CHOICES = ("auto", "cpu", "cuda")


@dataclass(frozen=True)
class Device:
    """A device and the floating-point type models use on it."""

    device: str  # "cpu", "cuda" or "cuda:N"
    dtype: torch.dtype

    @property
    def is_cuda(self) -> bool:
        return self.device.startswith("cuda")

    @property
    def use_cpu(self) -> bool:
        """For a trainer's ``use_cpu``: keep it off a GPU it would otherwise pick up."""
        return not self.is_cuda

    @property
    def bf16(self) -> bool:
        """For a trainer's ``bf16`` (mixed precision)."""
        import torch

        return self.dtype == torch.bfloat16

    @property
    def fp16(self) -> bool:
        """For a trainer's ``fp16`` (mixed precision, with loss scaling)."""
        import torch

        return self.dtype == torch.float16

    @property
    def threads(self) -> int | None:
        """torch's intra-op threads: one on the CPU, the library's default (None) with a GPU."""
        return None if self.is_cuda else 1


def pick_device(requested: str | None = None) -> Device:
    """The :class:`Device` for ``requested`` (``auto``/None, ``cpu``, ``cuda``, ``cuda:N``);
    see the module docstring for the rule."""
    require_extra("train", ("torch",), needed_for="a model on a device (--device)")
    import torch

    want = (requested or "auto").strip().lower()
    if want == "auto":
        want = "cuda" if torch.cuda.is_available() else "cpu"
    if want == "cpu":
        return Device("cpu", torch.float32)
    if want == "cuda" or (want.startswith("cuda:") and want[5:].isdigit()):
        if not torch.cuda.is_available():
            raise ConfigError(
                f"device {requested!r}: torch sees no CUDA GPU here (torch "
                f"{torch.__version__}); use --device cpu or auto"
            )
        index = int(want[5:]) if ":" in want else 0
        if index >= torch.cuda.device_count():
            raise ConfigError(
                f"device {requested!r}: there are {torch.cuda.device_count()} CUDA devices"
            )
        dtype = torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
        return Device(want, dtype)
    raise ConfigError(f"device {requested!r}: expected {', '.join(DEVICE_CHOICES)} or cuda:N")
