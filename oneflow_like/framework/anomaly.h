// Anomaly mode (torch.autograd.detect_anomaly): while on, the backward engine checks every
// gradient a node returns and fails naming the node when one holds a NaN. Process-wide, as
// PyTorch's (torch.is_anomaly_enabled is not thread-local either).
#pragma once

namespace oneflow_like {

bool AnomalyModeEnabled();
bool AnomalyCheckNan();
void SetAnomalyMode(bool enabled, bool check_nan = true);

}  // namespace oneflow_like
