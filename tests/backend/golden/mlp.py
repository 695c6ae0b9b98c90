# D[mlp]: the primal result and what its backpropagator reads
def mlp_chad(W1, b1, W2, x):
    # line 28: h = np.tanh(W1 @ x + b1)
    matmul = W1 @ x
    matmul_like = like(matmul)  # for its shape: the array is let go
    added = matmul + b1
    del matmul
    h = np.tanh(added)
    del added
    y = W2 @ h  # line 29: y = W2 @ h
    # line 30: return np.sum(y * y)
    mul = y * y
    total = np.sum(mul)
    del mul
    return (total, (y, W2, h, matmul_like, b1, W1, x))


# run: the backpropagator of mlp, cotangents of its parameters (slots W1=0, b1=1, W2=2, x=3)
def mlp_bp(saved, d):
    y, W2, h, matmul_like, b1, W1, x = saved  # the values of the forward pass it reads
    dy = as_number(d) * y * 2.0  # line 30: return np.sum(y * y)
    # line 29: y = W2 @ h
    dW2 = matmul_ct_a(dy, W2, h)
    dh = matmul_ct_b(dy, W2, h)
    # line 28: h = np.tanh(W1 @ x + b1)
    d_dense_1 = dense(dh, h)
    dadded = d_dense_1 * (1.0 - h * h)
    dmatmul = unbroadcast(dadded, matmul_like)
    db1 = unbroadcast(dadded, b1)
    dW1 = matmul_ct_a(dmatmul, W1, x)
    dx = matmul_ct_b(dmatmul, W1, x)
    return (dW1, db1, dW2, dx)
