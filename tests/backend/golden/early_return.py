# D[early_return]: the primal result and what its backpropagator reads
def early_return_chad(x):
    # line 46: for i in range(5):
    indices = range(5)
    status, x_1, retval = (0, x, None)
    tape = []  # one record per iteration
    for i in indices:  # D[loop]: forward iterations
        # line 47: if x > 3.0:
        cond = x_1 > 3.0
        if cond:  # D[case]
            # line 48: return x * i
            mul = x_1 * i
            state = (2, x_1, mul)
            result = state
        else:
            # line 49: x = x * 1.5
            x_2 = x_1 * 1.5
            state_1 = (0, x_2, retval)
            result = state_1
        next_1, next_2, next_3 = result
        tape.append(cond)
        status, x_1, retval = (next_1, next_2, next_3)
        if next_1:
            break
    status_1, x_3, retval_1 = (status, x_1, retval)
    returned = status_1 == 2
    if returned:  # D[case]
        result_1 = retval_1
    else:
        result_1 = x_3
    return (result_1, (returned, tape, indices))


# run: the backpropagator of early_return, cotangents of its parameters (slots x=0)
def early_return_bp(saved, d):
    returned, tape, indices = saved  # the values of the forward pass it reads
    dx_3 = 0.0  # scope x_3
    dretval_1 = 0.0  # scope retval_1
    # line 46: for i in range(5):
    if returned:  # the branch taken forward
        dretval_1 += d
    else:
        dx_3 += d
    d_status_1_x_3_retval_1 = {1: dx_3, 2: dretval_1}
    dx_1_carry = tuple_part(d_status_1_x_3_retval_1, 1, 0.0)  # cotangent of the final x_1
    dretval_carry = tuple_part(d_status_1_x_3_retval_1, 2, 0.0)  # cotangent of the final retval
    for i, cond in zip(reversed(indices[:len(tape)]), reversed(tape)):  # the iterations, newest first
        dx_1 = 0.0  # scope x_1
        dretval = 0.0  # scope retval
        dnext_2 = dx_1_carry
        dnext_3 = dretval_carry
        # line 47: if x > 3.0:
        if cond:  # the branch taken forward
            # line 48: return x * i
            dx_1 += dnext_2
            dx_1 += dnext_3 * i
        else:
            # line 49: x = x * 1.5
            dretval += dnext_3
            dx_1 += dnext_2 * 1.5
        dx_1_carry = dx_1
        dretval_carry = dretval
    dx = dx_1_carry
    return (dx,)
