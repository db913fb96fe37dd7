"""Our own correct bodies for softmax_loss and nn_epoch.

Every mutant and alternative is built on the reference with these two
bodies swapped in, so which ops Q5/Q6 depend on is fixed here (softmax:
exp, log, summation over (1,) and over all, negate, broadcast_to,
divide_scalar; nn_epoch: matmul, relu, softmax_loss, backward) and does not
move when the reference's own simple_ml.py is tuned for speed. The base is
itself graded (it must score 100) before any mutant verdict is trusted.
"""
from .build import SIMPLE_ML, Body

# The rows are divided by the batch size before their sum, so that float32
# stays float32 under the sandbox's numpy 1.26 too (there a 0-d sum divided
# by a Python int is float64), and the base passes every advisory.
SOFTMAX = """
shift = ndl.Tensor(Z.numpy().max(axis=1, keepdims=True), requires_grad=False)
shifted = Z - ndl.broadcast_to(shift, Z.shape)
log_sum_exp = ndl.log(ndl.summation(ndl.exp(shifted), axes=(1,)))
true_logit = ndl.summation(shifted * y_one_hot, axes=(1,))
return ndl.summation((log_sum_exp - true_logit) / Z.shape[0])
"""

# {prepare}: a statement run first; {batches}: the (start, stop) pairs; {one_hot}: float32 one-hot of y_b;
# {logits}; {step}: the update. Mutants change one of them.
NN_EPOCH = """
num_classes = W2.shape[1]
{prepare}
for start, stop in {batches}:
    X_b = ndl.Tensor(X[start:stop], requires_grad=False)
    y_b = y[start:stop]
    {one_hot}
    logits = {logits}
    softmax_loss(logits, ndl.Tensor(y_one_hot, requires_grad=False)).backward()
    {step}
return W1, W2
"""
BATCHES = "[(s, s + batch) for s in range(0, X.shape[0], batch)]"
ONE_HOT = ("y_one_hot = np.zeros((y_b.shape[0], num_classes), dtype=np.float32); "
           "y_one_hot[np.arange(y_b.shape[0]), y_b] = 1")
LOGITS = "ndl.relu(X_b @ W1) @ W2"
STEP = ("W1, W2 = (ndl.Tensor(W.numpy() - lr * W.grad.numpy(), requires_grad=True) "
        "for W in (W1, W2))")


def nn_epoch(prepare="pass", batches=BATCHES, one_hot=ONE_HOT, logits=LOGITS, step=STEP):
    return Body(SIMPLE_ML, "nn_epoch", NN_EPOCH.format(prepare=prepare, batches=batches, one_hot=one_hot,
                                                       logits=logits, step=step))


def softmax(code=SOFTMAX):
    return Body(SIMPLE_ML, "softmax_loss", code)


BASE = (softmax(), nn_epoch())
