# D[list_append]: the primal result and what its backpropagator reads
def list_append_chad(x, n):
    ys = []  # line 34: ys = []
    # line 35: for i in range(n):
    indices = range(n)
    ys_1 = ys
    tape = []  # one record per iteration
    for i in indices:  # D[loop]: forward iterations
        # line 36: ys.append(x * i)
        mul = x * i
        ys_2 = append(ys_1, mul)
        saved = len(ys_2) - 1  # kept for D[append]
        tape.append(saved)
        ys_1 = ys_2
    ys_3 = ys_1
    # line 37: return sum(ys)
    total = sum(ys_3)
    saved_1 = len(ys_3)  # kept for D[sum]
    return (total, (ys_3, saved_1, tape, indices))


# run: the backpropagator of list_append, cotangents of its parameters (slots x=0)
def list_append_bp(saved_2, d):
    ys_3, saved_1, tape, indices = saved_2  # the values of the forward pass it reads
    dx = 0.0  # parameter x
    dys_3 = sum_seq_ct(d, ys_3, saved_1)  # line 37: return sum(ys)
    # line 35: for i in range(n):
    dys_1_carry = dys_3  # cotangent of the final ys_1
    for i, saved in zip(reversed(indices[:len(tape)]), reversed(tape)):  # the iterations, newest first
        dys_2 = dys_1_carry
        # line 36: ys.append(x * i)
        dys_1, dmul = append_ct(dys_2, saved)
        dx += dmul * i
        dys_1_carry = dys_1
    return (dx, None)
