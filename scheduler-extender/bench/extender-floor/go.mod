module hetgpu.io/extender-floor

go 1.19
