import ArgumentParser
import ServiceLifecycle
import FormPost
import FormPostServer
print("x")
