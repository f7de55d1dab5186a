import torch

import mycorp

model = torch.nn.Linear(4, 4).cuda()
loss = model(torch.randn(2, 4).cuda()).sum()
loss.backward()
mycorp.cuda_sync()
