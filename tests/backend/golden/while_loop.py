# D[while_loop]: the primal result and what its backpropagator reads
def while_loop_chad(x):
    y = x  # line 72: y = x
    # line 73: while y < 10.0:
    y_1 = y
    tape = []  # one record per iteration
    while True:  # D[loop]: forward iterations
        cond = y_1 < 10.0
        if not cond:
            break
        # line 74: y = y * 2.0 + x
        mul = y_1 * 2.0
        y_2 = mul + x
        tape.append(None)
        y_1 = y_2
    y_3 = y_1
    return (y_3, (tape,))


# run: the backpropagator of while_loop, cotangents of its parameters (slots x=0)
def while_loop_bp(saved, d):
    tape = saved[0]  # the values of the forward pass it reads
    dx = 0.0  # parameter x
    # line 73: while y < 10.0:
    dy_1_carry = d  # cotangent of the final y_1
    for _ in reversed(tape):  # the iterations, newest first
        dy_2 = dy_1_carry
        # line 74: y = y * 2.0 + x
        dx += dy_2
        dy_1 = dy_2 * 2.0
        dy_1_carry = dy_1
    dy = dy_1_carry
    dx += dy  # line 72: y = x
    return (dx,)
