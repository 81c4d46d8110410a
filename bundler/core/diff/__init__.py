"""What changes between two versions of the fleet's input: BundleDeployments created and removed,
their options (values by path), and the objects their charts render to. Pure: data in, data out."""
