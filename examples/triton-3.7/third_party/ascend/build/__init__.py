from ascend_setup.hooks import prepare, activate
