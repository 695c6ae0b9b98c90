# D[dictionary]: the primal result and its backpropagator
def dictionary_chad(x, y):
    # line 54: d = {"a": x, "b": y * y}
    mul = y * y
    d = {'a': x, 'b': mul}
    s = 0.0  # line 55: s = 0.0
    # line 56: for k in d:
    places = positions(d)
    s_1 = s
    tape = []  # one record per iteration
    for k_1 in places:  # D[loop]: forward iterations
        x_1 = k_1
        k = x_1
        # line 57: s = s + d[k] * d["a"]
        item = d[k]
        item_1 = d['a']
        mul_1 = item * item_1
        s_2 = s_1 + mul_1
        tape.append((k, item, item_1))
        s_1 = s_2
    s_3 = s_1
    # run: the backpropagator of dictionary, cotangents of its parameters (slots x=0, y=1)
    def dictionary_bp(d_1):
        dd = Zero  # scope d
        # line 56: for k in d:
        ds_1_carry = d_1  # cotangent of the final s_1
        for k, item, item_1 in reversed(tape):  # the iterations, newest first
            ds_2 = ds_1_carry
            # line 57: s = s + d[k] * d["a"]
            ditem = ds_2 * item_1
            ditem_1 = ds_2 * item
            dd = add_at(dd, 'a', ditem_1)
            dd = add_at(dd, k, ditem)
            ds_1_carry = ds_2
        # line 54: d = {"a": x, "b": y * y}
        dx = tuple_part(dd, 'a', 0.0)
        dmul = tuple_part(dd, 'b', 0.0)
        dy = dmul * y
        dy += dmul * y
        return (dx, dy)
    return (s_3, dictionary_bp)
