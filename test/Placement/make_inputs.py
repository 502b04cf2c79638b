"""Writes the ResNet-50-shaped and transformer kgraphs of test/Placement/Inputs.

    /usr/bin/python3 test/Placement/make_inputs.py

resnet50_blocks: a 7x7/2 stem conv to 112x112x128, then 4 stages of 3/4/6/3
blocks (a cblock, which halves H and W, then dblocks) ending at 56/28/14/7
with f = 256/512/1024/2048. resnet50_convs: the same network with every
block flattened to its convs; a block's residual joins its last conv.
transformer: two pre-norm encoder layers (extension kinds).
"""
import os

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "Inputs")
STAGES = [(112, 256, 3), (56, 512, 4), (28, 1024, 6), (14, 2048, 3)]


def header(test, multiline=False):
    keys = [f"test={test}", "width=633", "height=633", "wdeltat=1", "wlength=1",
            "wadapter=0", "memlimit=24576"]
    if multiline:
        return "(*\n" + "".join(f"  {k}\n" for k in keys) + "*)\n"
    return "(* " + " ".join(keys) + " *)\n"


class Graph:
    def __init__(self):
        self.nodes, self.edges = [], []

    def node(self, kind, attrs, shape, name=None):
        idx = len(self.nodes)
        ref = f"{kind}[{idx}]"
        text = ref + " " + attrs
        if name:
            text += f" name='{name}'"
        self.nodes.append(text)
        return ref, shape

    def edge(self, src, dst, port="x"):
        dims = "".join(f"[{d}]" for d in src[1])
        self.edges.append(f"{src[0]}:y -> {dst[0]}:{port}, shape:{dims}")

    def text(self):
        return "\n".join(self.nodes) + "\n\n" + "\n".join(self.edges) + "\n"


def conv(g, name, H, W, R, C, K, T=1):
    out = ((H + T - 1) // T, (W + T - 1) // T, K)
    return g.node("conv", f"W={W} H={H} R={R} S={R} C={C} K={K} T={T} U={T}", out, name)


def resnet(flat):
    g = Graph()
    x = g.node("input", "n=[224 224 3]", (224, 224, 3), "image")
    stem = conv(g, "k1", 224, 224, 7, 3, 128, 2)
    g.edge(x, stem)
    x, n = stem, 1
    for hw, f, blocks in STAGES:
        for b in range(blocks):
            n += 1
            name = f"k{n}"
            if not flat:
                kind = "cblock" if b == 0 else "dblock"
                size = hw if b == 0 else hw // 2
                out = (size // 2, size // 2, f) if b == 0 else (size, size, f)
                blk = g.node(kind, f"f={f} h={size} w={size}", out, name)
                g.edge(x, blk)
                x = blk
                continue
            if b == 0:  # cblock(hw, hw, f)
                a = conv(g, name + "a", hw, hw, 1, f // 2, f // 4)
                m = conv(g, name + "b", hw, hw, 3, f // 4, f // 4, 2)
                c = conv(g, name + "c", hw // 2, hw // 2, 1, f // 4, f)
                s = conv(g, name + "s", hw, hw, 1, f // 2, f, 2)
                g.edge(x, a), g.edge(a, m), g.edge(m, c), g.edge(x, s), g.edge(s, c, "r")
            else:  # dblock(hw/2, hw/2, f)
                h = hw // 2
                a = conv(g, name + "a", h, h, 1, f, f // 4)
                m = conv(g, name + "b", h, h, 3, f // 4, f // 4)
                c = conv(g, name + "c", h, h, 1, f // 4, f)
                g.edge(x, a), g.edge(a, m), g.edge(m, c), g.edge(x, c, "r")
            x = c
    out = g.node("output", "n=[7 7 2048]", None, "logits")
    g.edge(x, out)
    return g


def transformer():
    g = Graph()
    L, E, A, FF = 128, 512, 8, 2048
    x = g.node("input", f"n=[{L} {E}]", (L, E), "tokens")
    for layer in range(2):
        p = f"l{layer}_"
        n1 = g.node("norm", f"N={L} F={E}", (L, E), p + "norm1")
        qkv = g.node("matmul", f"M={L} K={E} N={3 * E}", (L, 3 * E), p + "qkv")
        att = g.node("attention", f"L={L} D={E // A} A={A}", (L, E), p + "attn")
        proj = g.node("matmul", f"M={L} K={E} N={E}", (L, E), p + "proj")
        add1 = g.node("eltwise", f"E={L * E} OPS=1", (L * E,), p + "add1")
        n2 = g.node("norm", f"N={L} F={E}", (L, E), p + "norm2")
        up = g.node("matmul", f"M={L} K={E} N={FF}", (L, FF), p + "up")
        act = g.node("eltwise", f"E={L * FF} OPS=8", (L * FF,), p + "gelu")
        down = g.node("matmul", f"M={L} K={FF} N={E}", (L, E), p + "down")
        add2 = g.node("eltwise", f"E={L * E} OPS=1", (L * E,), p + "add2")
        for a, b in [(x, n1), (n1, qkv), (qkv, att), (att, proj), (proj, add1), (x, add1),
                     (add1, n2), (n2, up), (up, act), (act, down), (down, add2), (add1, add2)]:
            g.edge(a, b)
        x = add2
    out = g.node("output", f"n=[{L * E}]", None, "hidden")
    g.edge(x, out)
    return g


def main():
    files = {
        "resnet50_blocks.kgraph": header("resnet50_blocks", multiline=True) + resnet(False).text(),
        "resnet50_convs.kgraph": header("resnet50_convs") + resnet(True).text(),
        "transformer.kgraph": header("transformer") + transformer().text(),
    }
    for name, text in files.items():
        with open(os.path.join(HERE, name), "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
