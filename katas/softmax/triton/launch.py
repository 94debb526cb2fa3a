"""Default launch plan for the Triton softmax stub: one program per row, BLOCK columns per tile."""


def launch(gpu, x, y, R, C):
    BLOCK = 1024
    gpu.launch("softmax", grid=R, args=(x, y, R, C), num_warps=4, num_stages=1, constexprs=dict(BLOCK=BLOCK))
