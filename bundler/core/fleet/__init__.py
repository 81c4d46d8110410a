"""Fleet's repositories as bundler's Bundles (`bundler import fleet`), pure.

:mod:`~bundler.core.fleet.bundle` converts one fleet.yaml (its helm part) and the GitRepo's settings
into a Bundle document and notes; :mod:`~bundler.core.fleet.targets` makes Fleet's two target lists
(the GitRepo's, which select, and the customizations, which customize) one list with the same
meaning; :mod:`~bundler.core.fleet.names` gives bundles Fleet's names; :mod:`~bundler.core.fleet.
shapes` checks the types of the fields read; :mod:`~bundler.core.fleet.notes` is what the import
reports, naming FILE:LINE. Values templates are converted by bundler.core.templating.gotemplate.
Reading the files and publishing the charts kept in the repository is bundler.commands.import_fleet.
"""
